package bench

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crawler-dev/crawler/internal/demosite"
)

// WriteCrawl prints the crawl tables in format f.
func WriteCrawl(w io.Writer, f Format, opts CrawlOptions, results []CrawlResult) error {
	return WriteTables(w, f, CrawlTables(opts, results)...)
}

// CrawlTables are the crawl benchmark's tables: throughput and cost per
// page by cluster size, then where Redis's commands per page come from,
// by command and, when tapped, by the command each process sent.
func CrawlTables(opts CrawlOptions, results []CrawlResult) []Table {
	out := []Table{crawlTable(opts, results), redisBreakdown(results)}
	if len(results) > 0 && results[0].Tapped {
		out = append(out, sentBreakdown(results))
	}
	return out
}

func crawlTable(opts CrawlOptions, results []CrawlResult) Table {
	t := Table{
		Caption: crawlCaption(opts),
		Header: []string{"slaves", "pages", "wall", "pages/s", "steady pages/s", "vs n × 1 slave",
			"crawler CPU/page", "master CPU/page", "slaves CPU/page", "Redis CPU/page",
			"Redis cmds/page", "sent cmds/page", "round trips/page", "slave peak RSS"},
		Notes: crawlNotes(opts, results),
	}
	one := oneSlaveRate(results)
	for _, r := range results {
		scaling := "-"
		if one > 0 {
			scaling = fmt.Sprintf("%.2f", r.SteadyRate/(float64(r.Slaves)*one))
		}
		sent, trips := "n/a", "n/a"
		if r.Tapped {
			sent = fmt.Sprintf("%.1f", r.PerPage(float64(r.MasterTap.Sent()+r.SlavesTap.Sent())))
			trips = fmt.Sprintf("%.1f", r.PerPage(float64(r.MasterTap.RoundTrips+r.SlavesTap.RoundTrips)))
		}
		t.AddRow(strconv.Itoa(r.Slaves), strconv.FormatInt(r.Pages, 10), r.Wall.Round(10*time.Millisecond).String(),
			fmt.Sprintf("%.0f", r.PagesPerSecond()), fmt.Sprintf("%.0f", r.SteadyRate), scaling,
			msPerPage(r, r.CrawlerCPU()), msPerPage(r, r.MasterCPU), msPerPage(r, r.SlavesCPU), msPerPage(r, r.Redis.CPU),
			fmt.Sprintf("%.1f", r.PerPage(float64(r.Redis.Calls()))), sent, trips, mib(r.SlavePeakRSS))
	}
	return t
}

func crawlCaption(o CrawlOptions) string {
	size := fmt.Sprintf("%d detail pages", o.Details)
	if o.DetailsPerSlave > 0 {
		size = fmt.Sprintf("%d detail pages per slave", o.DetailsPerSlave)
	}
	page := "about 2 KB"
	if o.PageBytes > 0 {
		page = mib(int64(o.PageBytes))
	}
	seeds := "every list page seeded"
	if o.Seeds == SeedsFirst {
		seeds = "each host's first list page seeded"
	}
	if o.PerPage > 0 {
		seeds += fmt.Sprintf(", %d detail links per list page", o.PerPage)
	}
	return fmt.Sprintf("Crawl of a loopback demo site: %s of %s over %d host(s), %v latency per response, %s; "+
		"slave concurrency %d; real master and slave processes, items to %s.",
		size, page, o.Hosts, o.Latency, seeds, o.Concurrency, storeName(o.MongoURI))
}

func storeName(mongoURI string) string {
	if mongoURI != "" {
		return "MongoDB"
	}
	return "JSON Lines files"
}

func crawlNotes(opts CrawlOptions, results []CrawlResult) []string {
	var notes []string
	if opts.Seeds == SeedsAll {
		notes = append(notes, "Every list page is a seed, so the master's walk of list pages (one after another on "+
			"each host) is not what limits the crawl; --seeds first measures that walk too.")
	} else if opts.Latency > 0 {
		step := newLinksPerListPage(opts.PerPage)
		ceiling := float64(opts.Hosts*step) / opts.Latency.Seconds()
		notes = append(notes, fmt.Sprintf("The master walks each host's list pages one after another (a page names the next), "+
			"so the site cannot yield more than hosts × new links per list page / latency = %d × %d / %v ≈ %.0f detail pages/s, "+
			"whatever the cluster.", opts.Hosts, step, opts.Latency, ceiling))
	}
	notes = append(notes,
		"pages: detail pages stored; wall: from submitting the job to seeing it finished; pages/s = pages / wall; "+
			"steady pages/s: between the polls that first saw 10% and 90% of the pages stored; "+
			"vs n × 1 slave: steady pages/s over n times the 1-slave row's.",
		"CPU: user+system time of each process from /proc/<pid>/stat over the job (just before submit to finished); "+
			"crawler = master + slaves. Redis CPU: used_cpu_user + used_cpu_sys of INFO over the same interval.",
		"Redis cmds/page: the calls of INFO commandstats over the job, the commands scripts run inside included, "+
			"the benchmark's own status polls (two HGETs per 50 ms) taken out.",
		"sent cmds/page and round trips/page: counted on the wire by a loopback proxy in front of Redis, one per process; "+
			"a round trip is a burst of commands after a reply (one command, or one pipeline). The counts agree with the "+
			"processes' own go-redis hook (--metrics: crawler_redis_roundtrip_seconds_count, crawler_redis_commands_total). "+
			"Redis cmds − sent cmds = the commands scripts ran inside.",
		"slave peak RSS: the largest VmHWM (/proc/<pid>/status) of the slaves.",
	)
	var bench []string
	for _, r := range results {
		bench = append(bench, fmt.Sprintf("%d slave(s) %s", r.Slaves, msPerPage(r, r.BenchCPU)))
	}
	if len(bench) > 0 {
		notes = append(notes, "CPU of the benchmark process per page (the site, the proxies, the polls), on the same cores: "+
			strings.Join(bench, ", ")+".")
	}
	return notes
}

func oneSlaveRate(results []CrawlResult) float64 {
	for _, r := range results {
		if r.Slaves == 1 {
			return r.SteadyRate
		}
	}
	return 0
}

func msPerPage(r CrawlResult, d time.Duration) string {
	return fmt.Sprintf("%.3f ms", r.PerPage(float64(d))/float64(time.Millisecond))
}

// mib writes a size in MiB, or in KiB below 1 MiB.
func mib(b int64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

// runHeader names each result's column: its label, else "1 slave",
// "4 slaves".
func runHeader(r CrawlResult) string {
	if r.Label != "" {
		return r.Label
	}
	if r.Slaves == 1 {
		return "1 slave"
	}
	return strconv.Itoa(r.Slaves) + " slaves"
}

// redisBreakdown is Redis's calls per page by command, with Redis's time
// in each.
func redisBreakdown(results []CrawlResult) Table {
	t := Table{
		Caption: "Redis commands per stored page by command: INFO commandstats over the job (commands run inside " +
			"scripts included), with Redis's time in them per page.",
		Header: []string{"command"},
		Notes: []string{"A script's time (evalsha) includes the commands it runs; each inner command's time is " +
			"also on its own line. Rows under 0.01 calls per page in every column are left out."},
	}
	for _, r := range results {
		t.Header = append(t.Header, runHeader(r)+": calls/page (µs/page)")
	}
	names := rankNames(results, func(r CrawlResult) map[string]float64 {
		m := map[string]float64{}
		for k, c := range r.Redis.Commands {
			m[k] = float64(c.Calls)
		}
		return m
	})
	for _, name := range names {
		row := []string{name}
		for _, r := range results {
			c := r.Redis.Commands[name]
			row = append(row, fmt.Sprintf("%.2f (%.1f)", r.PerPage(float64(c.Calls)), r.PerPage(float64(c.Usec))))
		}
		t.AddRow(row...)
	}
	total := []string{"total"}
	for _, r := range results {
		var usec int64
		for _, c := range r.Redis.Commands {
			usec += c.Usec
		}
		total = append(total, fmt.Sprintf("%.2f (%.1f)", r.PerPage(float64(r.Redis.Calls())), r.PerPage(float64(usec))))
	}
	t.AddRow(total...)
	return t
}

// sentBreakdown is the commands each role sent per page, by name, and
// its round trips.
func sentBreakdown(results []CrawlResult) Table {
	t := Table{
		Caption: "Commands the processes sent per stored page, by role and command, counted on the wire, and round " +
			"trips per page. A script call (EVALSHA, or EVAL after NOSCRIPT) is \"script\" and the script's name, " +
			"taken from the first comment of its source.",
		Header: []string{"role", "command"},
		Notes:  []string{"Rows under 0.01 per page in every column are left out."},
	}
	for _, r := range results {
		t.Header = append(t.Header, runHeader(r))
	}
	for _, role := range []string{"master", "slaves"} {
		tap := func(r CrawlResult) TapCounts {
			if role == "master" {
				return r.MasterTap
			}
			return r.SlavesTap
		}
		row := []string{role, "round trips"}
		for _, r := range results {
			row = append(row, fmt.Sprintf("%.2f", r.PerPage(float64(tap(r).RoundTrips))))
		}
		t.AddRow(row...)
		names := rankNames(results, func(r CrawlResult) map[string]float64 {
			m := map[string]float64{}
			for k, v := range tap(r).Commands {
				m[k] = float64(v)
			}
			return m
		})
		for _, name := range names {
			row := []string{role, name}
			for _, r := range results {
				row = append(row, fmt.Sprintf("%.2f", r.PerPage(float64(tap(r).Commands[name]))))
			}
			t.AddRow(row...)
		}
	}
	return t
}

// rankNames returns the names of counts that reach 0.01 per page in some
// result, most frequent (in the last result) first.
func rankNames(results []CrawlResult, counts func(CrawlResult) map[string]float64) []string {
	seen := map[string]bool{}
	var names []string
	for _, r := range results {
		for name, n := range counts(r) {
			if !seen[name] && r.PerPage(n) >= 0.01 {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	if len(results) == 0 {
		return names
	}
	last := counts(results[len(results)-1])
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(last[b], last[a]), cmp.Compare(a, b))
	})
	return names
}

// newLinksPerListPage is how many detail links each list page of the demo
// site adds to those of the page before it, with perPage links a page (0:
// the site's default).
func newLinksPerListPage(perPage int) int {
	const details = 100_000
	site := demosite.New(demosite.Options{Details: details, PerPage: perPage})
	return details / site.ListPages()
}
