package bench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// WriteHosts prints the many-host benchmark's tables in format f.
func WriteHosts(w io.Writer, f Format, rep HostsReport) error {
	return WriteTables(w, f, append(HostsTables(rep), HostsGoals(rep))...)
}

// HostsTables are the many-host benchmark's tables: a row per crawl, then
// where Redis's commands per page come from, by command and, when tapped,
// by the command each process sent.
func HostsTables(rep HostsReport) []Table {
	results := make([]CrawlResult, len(rep.Runs))
	for i, r := range rep.Runs {
		results[i] = r.Crawl
	}
	out := []Table{hostsTable(rep), redisBreakdown(results)}
	if len(results) > 0 && results[0].Tapped {
		out = append(out, sentBreakdown(results))
	}
	return out
}

func hostsTable(rep HostsReport) Table {
	t := Table{
		Caption: hostsCaption(rep.Opts),
		Header: []string{"hosts", "slaves", "stored once", "wall", "pages/s", "bound", "of the bound",
			"Redis cmds/page", "Redis CPU/page", "crawler CPU/page", "most in flight at a host",
			"most in 1 s at a host", fmt.Sprintf("hosts over %d at once", hostsInFlight),
			fmt.Sprintf("hosts over %d in 1 s", hostsRate+hostsBurst())},
		Notes: hostsNotes(rep),
	}
	if rep.Opts.Rounds > 1 {
		t.Header = slices.Insert(t.Header, 2, "round")
	}
	for _, r := range rep.Runs {
		c := r.Crawl
		row := []string{grouped(r.Hosts), strconv.Itoa(r.Slaves), storedOnce(r.Items),
			c.Wall.Round(100 * time.Millisecond).String(), fmt.Sprintf("%.0f", c.PagesPerSecond()),
			r.Bound().Round(100 * time.Millisecond).String(), fmt.Sprintf("%.2f", r.OfBound()),
			fmt.Sprintf("%.1f", c.PerPage(float64(c.Redis.Calls()))), msPerPage(c, c.Redis.CPU), msPerPage(c, c.CrawlerCPU()),
			strconv.Itoa(r.Site.PeakInFlight().PeakInFlight), strconv.Itoa(r.Site.PeakSecond().PeakSecond),
			grouped(r.Site.OverInFlight(hostsInFlight)) + " of " + grouped(r.Hosts),
			grouped(r.Site.OverSecond(hostsRate+hostsBurst())) + " of " + grouped(r.Hosts)}
		if rep.Opts.Rounds > 1 {
			row = slices.Insert(row, 2, strconv.Itoa(r.Round))
		}
		t.AddRow(row...)
	}
	return t
}

func hostsCaption(o HostsOptions) string {
	site := o.siteOptions()
	return fmt.Sprintf("Many hosts on the job file's defaults: H sites served by one process on H loopback addresses "+
		"(127.0.0.2, 127.0.0.3, …), each %d detail pages behind %d list pages chained by next links (%d detail links "+
		"each), %v latency per response, 1 in %d detail pages faulty (a 404, a 503 once, a 503 twice, a reset, a 1 s "+
		"stall, in turn), a robots.txt allowing everything, and a redirect loop /loop/1 → /loop/2 → /loop/3 → /loop/1 "+
		"linked from every list page as a detail page is. One job seeds every site's first list page, per_host_rps "+
		"and per_host_concurrency left out (%d requests/s with a burst of %d, %d in flight per host), robots.txt "+
		"obeyed; 1 master + N slaves at their default concurrency (%d), items to JSON Lines files.",
		o.DetailsPerHost, o.ListPages, site.PerPage, o.Latency, o.FaultEvery, hostsRate, hostsBurst(), hostsInFlight,
		o.crawlOptions().Concurrency)
}

// storedOnce is the pages stored against those expected, with what is
// wrong beside it.
func storedOnce(c ItemCount) string {
	s := grouped(c.Stored) + "/" + grouped(c.Expected)
	var wrong []string
	if c.Duplicates > 0 {
		wrong = append(wrong, fmt.Sprintf("%d duplicates", c.Duplicates))
	}
	if c.Unexpected > 0 {
		wrong = append(wrong, fmt.Sprintf("%d unexpected", c.Unexpected))
	}
	if len(wrong) > 0 {
		s += " (" + strings.Join(wrong, ", ") + ")"
	}
	return s
}

// grouped writes n with thousands separated: 15,840.
func grouped(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func hostsNotes(rep HostsReport) []string {
	limit := hostsRate + hostsBurst()
	notes := []string{
		"stored once: the distinct detail-page URLs in the processes' item files against the pages the sites " +
			"serve to store (the 404s and the loop are not); records of a URL already stored, and URLs not " +
			"expected, are named beside the count.",
		fmt.Sprintf("wall: from submitting the job to seeing it finished; pages/s = pages stored / wall. bound: the "+
			"busiest host's requests as the site counted them (robots.txt, list and detail pages, retries, every "+
			"redirect hop) ÷ its rate (%d/s): no crawler that keeps to the rate can finish that host sooner. "+
			"of the bound = bound / wall: 1 is as fast as politeness allows.", hostsRate),
		"Redis cmds/page: INFO commandstats over the job, the commands scripts run inside included, the benchmark's " +
			"own polls taken out; Redis CPU: used_cpu_user + used_cpu_sys of a redis-server of the benchmark's own; " +
			"crawler CPU: user + system of the master and the slaves (/proc); each per detail page stored.",
		fmt.Sprintf("The site's own view, per host: most in flight is the most requests it had at once, each from "+
			"when its handler started (before the latency) until it returned (a reset: until the connection was "+
			"given up); most in 1 s is the most requests that arrived within any one second (a sliding window over "+
			"the arrival times, exact). The columns give the highest over the hosts; hosts over counts the hosts "+
			"that ever had more than the cap (%d) at once, or more than rate + burst (%d + %d = %d) in a second.",
			hostsInFlight, hostsRate, hostsBurst(), limit),
		loopNote(rep.Runs),
	}
	notes = append(notes, busiestNotes(rep.Runs)...)
	return append(notes, benchNote(rep), fmt.Sprintf("Load average (1, 5, 15 min): %s before, %s after%s.",
		rep.LoadBefore, rep.LoadAfter, busyNote(rep.Opts.BusyLoops)))
}

// loopNote says what the redirect loops cost the sites and how the
// crawler recorded them.
func loopNote(runs []HostsRun) string {
	var hops []string
	reasons := map[string]int{}
	for _, r := range runs {
		most := maxHost(r.Site.Hosts, func(h HostView) int { return h.LoopHops }).LoopHops
		hops = append(hops, fmt.Sprintf("%s: %s of the %s requests (at most %d on a host)", r.label(),
			grouped(r.Site.LoopHops()), grouped(r.Site.Requests()), most))
		for reason, n := range r.Items.LoopFailures {
			reasons[reason] += n
		}
	}
	var recorded []string
	for _, reason := range slices.Sorted(maps.Keys(reasons)) {
		recorded = append(recorded, fmt.Sprintf("%q (%d)", reason, reasons[reason]))
	}
	if len(recorded) == 0 {
		recorded = []string{"none"}
	}
	return "Redirect loop: requests to /loop/ that the sites saw, every hop counted: " + strings.Join(hops, "; ") +
		". Failures the crawler recorded for it, by reason: " + strings.Join(recorded, ", ") + "."
}

// busiestPaths is how many paths of a busiest second a note shows.
const busiestPaths = 24

// busiestNotes say, per run, which host saw the most in one second and
// what it was asked for then.
func busiestNotes(runs []HostsRun) []string {
	var out []string
	for _, r := range runs {
		h := r.Site.PeakSecond()
		paths := h.BusiestPaths
		more := ""
		if len(paths) > busiestPaths {
			paths, more = paths[:busiestPaths], fmt.Sprintf(" and %d more", len(paths)-busiestPaths)
		}
		out = append(out, fmt.Sprintf("Busiest second, %s: %s saw %d requests in the second from %.2f s (since the first request to any host): %s%s.", r.label(), h.Host,
			h.PeakSecond, h.BusiestAt.Seconds(), strings.Join(paths, " "), more))
	}
	return out
}

// benchNote is the benchmark process's CPU per page (the sites, the polls),
// on the same cores as the crawl.
func benchNote(rep HostsReport) string {
	var parts []string
	for _, r := range rep.Runs {
		parts = append(parts, r.label()+" "+msPerPage(r.Crawl, r.Crawl.BenchCPU))
	}
	return "CPU of the benchmark process per page (every site, the polls), on the same cores: " +
		strings.Join(parts, ", ") + "."
}

func busyNote(loops int) string {
	if loops == 0 {
		return ""
	}
	return fmt.Sprintf("; %d busy loops spinning throughout", loops)
}
