package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/slave"
)

// SiteBound is the least wall time any crawler holding PerHostConcurrency
// slots of the site can crawl it in:
//
//	max(R·l + S·stall) / c,  (levels + 1)·l,  stall + l,  R / rps)
//
// R requests at latency l each (robots.txt, every list and detail page,
// one more per 503 and per reset), S stalls holding a slot for stall more,
// c slots; the walk's levels one after another, each a list page at
// latency l, then a detail page of the last; a stalled page; the rate.
type SiteBound struct {
	Requests, ListPages, Levels, Stalls int
	Stored                              int64
	Wall                                time.Duration
}

// PagesPerSecond is the most detail pages per second the bound allows.
func (b SiteBound) PagesPerSecond() float64 { return float64(b.Stored) / b.Wall.Seconds() }

// siteBound is the bound of crawling site, of latency l, on o's budget.
func siteBound(site *demosite.Site, o SiteOptions, l time.Duration) SiteBound {
	f := site.Faults()
	lists := site.ListPages()
	b := SiteBound{ListPages: lists, Levels: 1 + (lists-1+o.NextLinks-1)/o.NextLinks, Stalls: f.Stalls}
	b.Requests = 1 + lists + o.Details + f.Retries()
	for _, outcome := range site.Expected() {
		if outcome == demosite.Stored {
			b.Stored++
		}
	}
	slots := (time.Duration(b.Requests)*l + time.Duration(f.Stalls)*o.Stall) / time.Duration(o.PerHostConcurrency)
	rate := time.Duration(float64(b.Requests) / o.PerHostRPS * float64(time.Second))
	b.Wall = max(slots, time.Duration(b.Levels+1)*l, rate)
	if f.Stalls > 0 {
		b.Wall = max(b.Wall, o.Stall+l)
	}
	return b
}

// WriteSite prints the one-site benchmark's tables in format f.
func WriteSite(w io.Writer, f Format, rep SiteReport) error {
	return WriteTables(w, f, append(SiteTables(rep), SiteGoals(rep))...)
}

// SiteTables are the one-site benchmark's tables, one per latency: each
// crawler's pages/s and costs per page, lowest–highest over the rounds.
func SiteTables(rep SiteReport) []Table {
	var out []Table
	for _, l := range rep.Opts.Latencies {
		out = append(out, siteTable(rep, l))
		if st := sinkTable(rep, l); st != nil {
			out = append(out, *st)
		}
		if st := stageTable(rep, l); st != nil {
			out = append(out, *st)
		}
		var tapped []CrawlResult
		for _, r := range rep.runsOf(CrawlerCluster, l) {
			if r.Detail != nil {
				tapped = append(tapped, *r.Detail)
			}
		}
		if len(tapped) > 0 {
			out = append(out, redisBreakdown(tapped), sentBreakdown(tapped))
		}
	}
	return out
}

func siteTable(rep SiteReport, l time.Duration) Table {
	o, b := rep.Opts, rep.Bounds[l]
	t := Table{
		Caption: fmt.Sprintf("One site, %v latency: %d detail pages (%d to store), %d list pages each linking the next %d "+
			"(%d levels from the first), 1 in %d detail pages faulty; per_host_rps %g, per_host_concurrency %d; "+
			"%d rounds, interleaved. Bound: %v (%.0f pages/s).", l, o.Details, b.Stored, b.ListPages, o.NextLinks,
			b.Levels, o.FaultEvery, o.PerHostRPS, o.PerHostConcurrency, o.Rounds, b.Wall.Round(10*time.Millisecond),
			b.PagesPerSecond()),
		Header: []string{"crawler", "pages/s", "× colly", "of the bound", "crawler CPU/page", "Redis CPU/page",
			"Redis cmds/page", "peak RSS", "stored", "site requests", "slots busy", "peak at site"},
		Notes: siteNotes(rep, l),
	}
	for _, name := range o.Crawlers {
		runs := rep.runsOf(name, l)
		if len(runs) == 0 {
			continue
		}
		t.AddRow(crawlerLabel(name, o),
			spanOf(runs, "%.0f", SiteRun.PagesPerSecond),
			rep.collyRatio(name, l),
			spanOf(runs, "%.2f", func(r SiteRun) float64 { return r.PagesPerSecond() / b.PagesPerSecond() }),
			spanOf(runs, "%.2f ms", func(r SiteRun) float64 { return r.perPage(msOf(r.CrawlerCPU)) }),
			redisCPUCell(runs),
			redisCallsCell(runs),
			spanOf(runs, "%.0f MiB", func(r SiteRun) float64 { return float64(r.PeakRSS) / (1 << 20) }),
			spanOf(runs, "%.0f", func(r SiteRun) float64 { return float64(r.Stored) })+fmt.Sprintf(" of %d", b.Stored),
			spanOf(runs, "%.0f", func(r SiteRun) float64 { return float64(r.Requests) }),
			spanOf(runs, "%.1f", func(r SiteRun) float64 { return r.SiteBusy.Seconds() / r.Wall.Seconds() }),
			spanOf(runs, "%.0f", func(r SiteRun) float64 { return float64(r.SitePeak) }))
	}
	return t
}

func siteNotes(rep SiteReport, l time.Duration) []string {
	b := rep.Bounds[l]
	var used string
	if runs := rep.runsOf(CrawlerRun, l); len(runs) > 0 && runs[0].Redis != "" {
		used = " `crawler run` used: " + runs[0].Redis + "."
	}
	return []string{
		fmt.Sprintf("Bound = max((R·l + S·stall) / c, (levels + 1)·l, stall + l, R / rps): R = %d requests (robots.txt, "+
			"every list and detail page, one more per 503 and per reset), l = %v, S = %d pages stalling %v, c = %d slots, "+
			"%d levels. No crawler holding %d slots of the site can store its %d pages sooner.",
			b.Requests, l, b.Stalls, rep.Opts.Stall, rep.Opts.PerHostConcurrency, b.Levels, rep.Opts.PerHostConcurrency, b.Stored),
		fmt.Sprintf("Crawlers: the cluster's master and slaves on their defaults (slaves at --concurrency %d), "+
			"`crawler run` on its defaults (1 slave at 48), colly with Parallelism %d, retries of 5xx, 429, 408 and "+
			"failed connections up to twice (our jobs' max_retries: 2), and links spelled one way (host in lower case, "+
			"query sorted, no fragment) so that its visited set, like our canonical URLs, sees each page once: "+
			"the site requests column shows every crawler made the same requests.", slave.DefaultConcurrency,
			rep.Opts.PerHostConcurrency),
		"pages/s: detail pages stored per second of wall time: from submit to finished for the cluster (its processes " +
			"already running, as a cluster does), from start to exit for `crawler run` and colly (their start included). " +
			"× colly: each round's pages/s over colly's in the same round.",
		"CPU: user + system of every crawler process (/proc, wait4); Redis: the cluster's redis-server (INFO, the " +
			"benchmark's own commands taken out), or the redis-server `crawler run` started for itself (/proc). " +
			"Peak RSS: the largest process (VmHWM)." + used,
		fmt.Sprintf("slots busy: the time the site spent on requests, summed, over the wall time: how many of the %d "+
			"slots were in use on average; peak at site: the most requests it served at once (never above %d).",
			rep.Opts.PerHostConcurrency, rep.Opts.PerHostConcurrency),
		fmt.Sprintf("Load average (1, 5, 15 min): %s before, %s after.", rep.LoadBefore, rep.LoadAfter),
	}
}

// crawlerLabel names a crawler's row.
func crawlerLabel(name string, o SiteOptions) string {
	switch name {
	case CrawlerCluster:
		return fmt.Sprintf("1 master + %d slaves", o.Slaves)
	case CrawlerRun:
		return "`crawler run`"
	case CrawlerColly:
		return fmt.Sprintf("colly v2, Parallelism %d", o.PerHostConcurrency)
	}
	return "`crawler run` --sink " + sinkSchemes[name]
}

func redisCPUCell(runs []SiteRun) string {
	if runs[0].RedisCPU == 0 && runs[0].Crawler == CrawlerColly {
		return "-"
	}
	return spanOf(runs, "%.3f ms", func(r SiteRun) float64 { return r.perPage(msOf(r.RedisCPU)) })
}

func redisCallsCell(runs []SiteRun) string {
	if runs[0].RedisCalls < 0 {
		return "-"
	}
	return spanOf(runs, "%.1f", func(r SiteRun) float64 { return r.perPage(float64(r.RedisCalls)) })
}

// runsOf are a crawler's runs at latency l.
func (rep SiteReport) runsOf(name string, l time.Duration) []SiteRun {
	var out []SiteRun
	for _, r := range rep.Runs {
		if r.Crawler == name && r.Latency == l {
			out = append(out, r)
		}
	}
	return out
}

// collyRatios are a crawler's pages/s over colly's, round by round.
func (rep SiteReport) collyRatios(name string, l time.Duration) []float64 {
	return rep.ratios(name, CrawlerColly, l)
}

// ratios are a crawler's pages/s over crawler base's, round by round.
func (rep SiteReport) ratios(name, base string, l time.Duration) []float64 {
	peer := map[int]float64{}
	for _, r := range rep.runsOf(base, l) {
		peer[r.Round] = r.PagesPerSecond()
	}
	var out []float64
	for _, r := range rep.runsOf(name, l) {
		if p := peer[r.Round]; p > 0 {
			out = append(out, r.PagesPerSecond()/p)
		}
	}
	return out
}

func (rep SiteReport) collyRatio(name string, l time.Duration) string {
	ratios := rep.collyRatios(name, l)
	if len(ratios) == 0 {
		return "-"
	}
	return span("%.2f", slices.Min(ratios), slices.Max(ratios))
}

// spanOf is the lowest–highest of f over runs.
func spanOf(runs []SiteRun, format string, f func(SiteRun) float64) string {
	lo, hi := f(runs[0]), f(runs[0])
	for _, r := range runs[1:] {
		lo, hi = min(lo, f(r)), max(hi, f(r))
	}
	return span(format, lo, hi)
}

// span writes lo–hi in format ("%.2f ms": 1.20–1.50 ms), one number
// when they read the same.
func span(format string, lo, hi float64) string {
	verb, unit, _ := strings.Cut(format, " ")
	if unit != "" {
		unit = " " + unit
	}
	a, b := fmt.Sprintf(verb, lo), fmt.Sprintf(verb, hi)
	if a == b {
		return a + unit
	}
	return a + "–" + b + unit
}
