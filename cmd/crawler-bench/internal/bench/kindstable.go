package bench

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// GoalKindsCPU is the most crawler CPU per page the shop crawl may cost,
// as a share of the two-kind crawl's (issue 20: the model's cost must be
// small).
const GoalKindsCPU = 1.10

// WriteKinds prints the kinds benchmark's tables in format f.
func WriteKinds(w io.Writer, f Format, rep KindsReport) error {
	return WriteTables(w, f, KindsTables(rep)...)
}

// KindsTables are the kinds benchmark's tables: each shape's median run
// (by crawler CPU per page) beside the other's, with the work each crawl
// had; then where Redis's commands come from and what each role sent.
func KindsTables(rep KindsReport) []Table {
	medians := rep.medians()
	results := make([]CrawlResult, len(medians))
	for i, m := range medians {
		results[i] = m.CrawlResult
	}
	out := []Table{kindsTable(rep, medians), redisBreakdown(results)}
	if len(results) > 0 && results[0].Tapped {
		out = append(out, sentBreakdown(results))
	}
	return out
}

// medians is each shape's run of median crawler CPU per page.
func (rep KindsReport) medians() []KindsRun {
	var out []KindsRun
	for _, shape := range []string{ShapeTwoKind, ShapeShop} {
		var runs []KindsRun
		for _, r := range rep.Runs {
			if r.Shape == shape {
				runs = append(runs, r)
			}
		}
		if len(runs) == 0 {
			continue
		}
		slices.SortFunc(runs, func(a, b KindsRun) int { return cmp.Compare(a.cpuPerPage(), b.cpuPerPage()) })
		out = append(out, runs[(len(runs)-1)/2])
	}
	return out
}

// cpuPerPage is the crawler's CPU per stored page.
func (r KindsRun) cpuPerPage() float64 { return r.PerPage(float64(r.CrawlerCPU())) }

// CPURatio is the shop's crawler CPU per page over the two-kind crawl's,
// by their median runs; 0 without both.
func (rep KindsReport) CPURatio() float64 {
	m := rep.medians()
	if len(m) < 2 || m[0].cpuPerPage() == 0 {
		return 0
	}
	return m[1].cpuPerPage() / m[0].cpuPerPage()
}

func kindsTable(rep KindsReport, medians []KindsRun) Table {
	o := rep.Opts
	t := Table{
		Caption: fmt.Sprintf("The crawl model's cost: %d pages stored from one loopback host without faults or latency, "+
			"by 1 master and %d slave(s) of concurrency %d (real processes, items to JSON Lines files), as the two-kind "+
			"job of the demo site and as the demo shop's job of page kinds; each shape's median of %d round(s) by "+
			"crawler CPU per page.", o.pages(), o.Slaves, o.Concurrency, o.Rounds),
		Header: []string{"shape", "pages", "requests", "list pages", "item links", "duplicates", "pages/s",
			"crawler CPU/page", "master CPU/page", "slaves CPU/page", "Redis CPU/page", "Redis cmds/page",
			"round trips/page", "CPU/page vs two-kind"},
	}
	var base float64
	for _, r := range medians {
		if r.Shape == ShapeTwoKind {
			base = r.cpuPerPage()
		}
	}
	for _, r := range medians {
		trips, vs := "n/a", "-"
		if r.Tapped {
			trips = fmt.Sprintf("%.1f", r.PerPage(float64(r.MasterTap.RoundTrips+r.SlavesTap.RoundTrips)))
		}
		if base > 0 {
			vs = fmt.Sprintf("%.2f", r.cpuPerPage()/base)
		}
		c := r.Status.Counters
		t.AddRow(r.Shape, fmt.Sprint(r.Pages), fmt.Sprint(r.Requests), fmt.Sprint(c.ListPages), fmt.Sprint(c.Discovered),
			fmt.Sprint(c.Duplicates), fmt.Sprintf("%.0f", r.PagesPerSecond()), msPerPage(r.CrawlResult, r.CrawlerCPU()),
			msPerPage(r.CrawlResult, r.MasterCPU), msPerPage(r.CrawlResult, r.SlavesCPU), msPerPage(r.CrawlResult, r.Redis.CPU),
			fmt.Sprintf("%.1f", r.PerPage(float64(r.Redis.Calls()))), trips, vs)
	}
	t.Notes = kindsNotes(rep)
	return t
}

func kindsNotes(rep KindsReport) []string {
	notes := []string{
		fmt.Sprintf("two-kind: the demo site's list pages (%d detail links each, each naming the next) walked from the "+
			"first with next_link and detail_link; the detail pages hold no links.", rep.Opts.PerPage),
		fmt.Sprintf("shop: the demo shop of %d categories × %d sub-categories (crawler demo --shop's site, grown), "+
			"its job of kinds start → category → list (%d products a page, paginated) → product, and a JSON API of "+
			"\"load more\" pages; a product has 7 typed fields (css, xpath, JSON-LD, regex; number, integer, date) "+
			"and 2 related links, which the slaves send back to the master to route: a tenth of the products are "+
			"reached only that way. Its sitemaps are left out (they would only add duplicates).",
			kindsCategories, kindsSubCategories, rep.Opts.PerPage),
		"requests: answered by the site, robots.txt included; list pages: pages of the kinds that are not items " +
			"(the master reads them); item links: the links to items admitted to the dupefilter (discovered), of " +
			"which duplicates were filtered as seen (the same product on a list page, on the API and in two " +
			"products' related links). Discovered = stored + failed + skipped + duplicates + cancelled.",
		"CPU: user+system time of the master and slave processes from /proc/<pid>/stat over the job; Redis: INFO. " +
			"The site runs in the benchmark process, outside these numbers.",
	}
	var rounds []string
	for _, r := range rep.Runs {
		rounds = append(rounds, fmt.Sprintf("%s %s", r.Shape, msPerPage(r.CrawlResult, r.CrawlerCPU())))
	}
	if len(rounds) > 0 {
		notes = append(notes, "Crawler CPU per page of every run, in the order run: "+strings.Join(rounds, ", ")+".")
	}
	return notes
}

// kindsGoal adds the goal of the model's cost to the goals table.
func kindsGoal(t *Table, rep *KindsReport) {
	if rep == nil {
		return
	}
	ratio := rep.CPURatio()
	if ratio == 0 {
		return
	}
	m := rep.medians()
	t.AddRow("shop crawl (page kinds) vs two-kind crawl of as many pages: crawler CPU per page",
		fmt.Sprintf("≤ %.2f×", GoalKindsCPU),
		fmt.Sprintf("%.2f× (%.3f vs %.3f ms)", ratio, m[1].cpuPerPage()/float64(time.Millisecond),
			m[0].cpuPerPage()/float64(time.Millisecond)), yesNo(ratio <= GoalKindsCPU))
}
