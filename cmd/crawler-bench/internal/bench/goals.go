package bench

import (
	"fmt"
	"time"
)

// crawlRun is one crawl section of the report: its options and results.
type crawlRun struct {
	opts    CrawlOptions
	results []CrawlResult
}

// Goals of the cluster's costs (issues 9 and 12), which the report sets
// beside what it measured.
const (
	GoalRedisCPUPerPage   = 50 * time.Microsecond
	GoalCrawlerCPUPerPage = 420 * time.Microsecond
	GoalIdleCallsPerNode  = 5.0 // "a few" Redis commands per second per idle node
	GoalScaling           = 0.9 // n slaves reach this share of n times one slave's rate
)

// goals is the goals table: each goal, what was measured, and whether
// it is met.
func (r *report) goals() Table {
	t := Table{
		Header: []string{"goal", "target", "measured", "met"},
		Notes: []string{"Per page: the lowest and highest over the rows of one crawl section below; a goal is met " +
			"when the highest is within it. With latency, costs that run by the second (polls, heartbeats, leases) " +
			"are spread over fewer pages per second, and a lightly loaded cluster's round trips each find Redis " +
			"asleep, which costs it several times more CPU than one that comes back to back (see Redis round trips); " +
			"at concurrency 128 the same crawl costs less per page. Scaling: steady pages/s."},
	}
	if r.site != nil {
		r.site.addSiteGoals(&t)
	}
	if r.hosts != nil {
		r.hosts.addHostsGoals(&t)
	}
	for _, c := range r.crawls {
		r.perPageGoals(&t, c)
	}
	r.scalingGoals(&t)
	kindsGoal(&t, r.kinds)
	r.idleGoal(&t)
	if m := r.memory; m != nil {
		t.AddRow(fmt.Sprintf("slave at --concurrency %d on %s pages: peak RSS", m.Opts.Concurrency, mib(int64(m.Opts.PageBytes))),
			"< "+mib(m.Opts.Limit), mib(m.Crawl.SlavePeakRSS), yesNo(m.Passed()))
	}
	return t
}

// perPageGoals adds the costs per page of one crawl section.
func (r *report) perPageGoals(t *Table, c crawlRun) {
	if len(c.results) == 0 {
		return
	}
	where := c.opts.where()
	span := func(f func(CrawlResult) float64) (lo, hi float64) {
		lo, hi = f(c.results[0]), f(c.results[0])
		for _, res := range c.results {
			lo, hi = min(lo, f(res)), max(hi, f(res))
		}
		return lo, hi
	}
	ms := func(d func(CrawlResult) time.Duration) (float64, float64) {
		return span(func(res CrawlResult) float64 { return res.PerPage(float64(d(res))) / float64(time.Millisecond) })
	}
	lo, hi := ms(func(res CrawlResult) time.Duration { return res.Redis.CPU })
	t.AddRow("Redis CPU per stored page"+where, fmt.Sprintf("≤ %.3f ms", msOf(GoalRedisCPUPerPage)),
		fmt.Sprintf("%.3f–%.3f ms", lo, hi), yesNo(hi <= msOf(GoalRedisCPUPerPage)))
	lo, hi = ms(CrawlResult.CrawlerCPU)
	t.AddRow("crawler CPU per page (master + slaves)"+where, fmt.Sprintf("≤ %.2f ms", msOf(GoalCrawlerCPUPerPage)),
		fmt.Sprintf("%.3f–%.3f ms", lo, hi), yesNo(hi <= msOf(GoalCrawlerCPUPerPage)))
	lo, hi = span(func(res CrawlResult) float64 { return res.PerPage(float64(res.Redis.Calls())) })
	t.AddRow("Redis commands per page, script-internal ones included"+where, "-", fmt.Sprintf("%.1f–%.1f", lo, hi), "-")
	if c.results[0].Tapped {
		lo, hi = span(func(res CrawlResult) float64 {
			return res.PerPage(float64(res.MasterTap.RoundTrips + res.SlavesTap.RoundTrips))
		})
		t.AddRow("Redis round trips per page"+where, "-", fmt.Sprintf("%.1f–%.1f", lo, hi), "-")
	}
}

func (r *report) scalingGoals(t *Table) {
	for _, c := range r.crawls {
		one := oneSlaveRate(c.results)
		if c.opts.Latency == 0 || one == 0 {
			continue
		}
		for _, res := range c.results {
			if res.Slaves == 1 {
				continue
			}
			share := res.SteadyRate / (float64(res.Slaves) * one)
			t.AddRow(fmt.Sprintf("%d slaves%s vs %d × 1 slave", res.Slaves, c.opts.where(), res.Slaves),
				fmt.Sprintf("≥ %.2f", GoalScaling), fmt.Sprintf("%.2f (%.0f vs %.0f pages/s)", share, res.SteadyRate, one),
				yesNo(share >= GoalScaling))
		}
	}
}

func (r *report) idleGoal(t *Table) {
	for _, res := range r.idle {
		perNode := res.PerSecond(float64(res.Redis.Calls())) / float64(res.Nodes)
		t.AddRow("idle cluster, "+res.Phase+": Redis commands/s per node", fmt.Sprintf("≤ %.0f", GoalIdleCallsPerNode),
			fmt.Sprintf("%.1f", perNode), yesNo(perNode <= GoalIdleCallsPerNode))
	}
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}
