package bench

import (
	"fmt"
	"time"
)

// Goals of the many-host benchmark (issue 28): Redis by the page, not by
// the host-second, and the site's view of politeness kept.
const (
	GoalHostsRedisCmds = 8.0                    // Redis commands per stored page, script-internal ones included
	GoalHostsRedisCPU  = 100 * time.Microsecond // Redis CPU per stored page
	// GoalHostsCrawlerCPU is the crawler's CPU per page at
	// GoalHostsCrawlerCPUAt hosts.
	GoalHostsCrawlerCPU   = 1500 * time.Microsecond
	GoalHostsCrawlerCPUAt = 120
	// GoalHostsBoundSlaves is the cluster size the bound goals hold at:
	// the 3 slaves. One slave's 32 workers cannot keep 120 hosts
	// at their rate with 100 ms latency.
	GoalHostsBoundSlaves = 3
)

// The share of the politeness bound the wall time must reach (bound /
// wall), at 40 and at 120 hosts.
const (
	GoalHostsOfBound40  = 0.9
	GoalHostsOfBound120 = 0.85
)

// goalOfBound is the bound goal at h hosts, if there is one.
func goalOfBound(h int) (float64, bool) {
	goal, ok := map[int]float64{40: GoalHostsOfBound40, 120: GoalHostsOfBound120}[h]
	return goal, ok
}

// HostsGoals is the many-host goals table.
func HostsGoals(rep HostsReport) Table {
	t := Table{Caption: "Many-host goals (issue 28)", Header: []string{"goal", "target", "measured", "met"}}
	rep.addHostsGoals(&t)
	return t
}

// addHostsGoals adds a row per goal and run to t.
func (rep HostsReport) addHostsGoals(t *Table) {
	for _, r := range rep.Runs {
		where := ", " + r.label()
		c := r.Crawl
		t.AddRow("every detail page stored exactly once"+where, "all", storedOnce(r.Items), yesNo(r.Items.ExactlyOnce()))
		cmds := c.PerPage(float64(c.Redis.Calls()))
		t.AddRow("Redis commands per stored page, script-internal included"+where, fmt.Sprintf("≤ %.0f", GoalHostsRedisCmds),
			fmt.Sprintf("%.1f", cmds), yesNo(cmds <= GoalHostsRedisCmds))
		cpu := c.PerPage(msOf(c.Redis.CPU))
		t.AddRow("Redis CPU per stored page"+where, fmt.Sprintf("≤ %.1f ms", msOf(GoalHostsRedisCPU)),
			fmt.Sprintf("%.3f ms", cpu), yesNo(cpu <= msOf(GoalHostsRedisCPU)))
		r.crawlerGoals(t, where)
		inFlight, second := r.Site.PeakInFlight(), r.Site.PeakSecond()
		limit := hostsRate + hostsBurst()
		t.AddRow("no host above the cap in flight"+where, fmt.Sprintf("≤ %d", hostsInFlight),
			fmt.Sprintf("%d at most; %s of %s hosts over", inFlight.PeakInFlight, grouped(r.Site.OverInFlight(hostsInFlight)),
				grouped(r.Hosts)),
			yesNo(inFlight.PeakInFlight <= hostsInFlight))
		t.AddRow("no host above rate + burst in any second"+where, fmt.Sprintf("≤ %d", limit),
			fmt.Sprintf("%d at most; %s of %s hosts over", second.PeakSecond, grouped(r.Site.OverSecond(limit)), grouped(r.Hosts)),
			yesNo(second.PeakSecond <= limit))
	}
}

// crawlerGoals adds the goals that hold at some numbers of hosts only:
// the crawler's CPU, and the wall time against the bound.
func (r HostsRun) crawlerGoals(t *Table, where string) {
	if r.Hosts == GoalHostsCrawlerCPUAt {
		cpu := r.Crawl.PerPage(msOf(r.Crawl.CrawlerCPU()))
		t.AddRow("crawler CPU per page (master + slaves)"+where, fmt.Sprintf("≤ %.1f ms", msOf(GoalHostsCrawlerCPU)),
			fmt.Sprintf("%.2f ms", cpu), yesNo(cpu <= msOf(GoalHostsCrawlerCPU)))
	}
	if goal, ok := goalOfBound(r.Hosts); ok && r.Slaves == GoalHostsBoundSlaves {
		t.AddRow("wall time against the politeness bound"+where, fmt.Sprintf("≥ %.2f", goal),
			fmt.Sprintf("%.2f (%v / %v)", r.OfBound(), r.Bound().Round(100*time.Millisecond),
				r.Crawl.Wall.Round(100*time.Millisecond)), yesNo(r.OfBound() >= goal))
	}
}
