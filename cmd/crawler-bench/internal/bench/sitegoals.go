package bench

import (
	"fmt"
	"slices"
	"time"
)

// Goals of the one-site benchmark (issue 16), against colly in the same
// run.
const (
	GoalClusterVsColly   = 1.5 // the cluster's pages/s over colly's, at 0 and 20 ms
	GoalRunVsColly       = 1.2 // `crawler run`'s pages/s over colly's, at 0 ms
	GoalRunCPUVsColly    = 1.5 // `crawler run`'s CPU per page over colly's
	GoalClusterRedisCmds = 5.0 // Redis commands per stored page
	GoalRunPeakRSS       = 100 << 20
	// GoalSameCrawl is how far a crawler's stored pages may fall from
	// what a correct crawl stores before a comparison is void.
	GoalSameCrawl = 0.01
)

// SiteGoals is the one-site goals table: each goal, what was measured
// (lowest–highest over the rounds) and whether it is met.
func SiteGoals(rep SiteReport) Table {
	t := Table{Caption: "One-site goals (issues 16 and 33)", Header: []string{"goal", "target", "measured", "met"},
		Notes: []string{"A ratio is met when every round's is; a cost per page when the highest is within it."}}
	rep.addSiteGoals(&t)
	return t
}

// addSiteGoals adds the one-site goals to t.
func (rep SiteReport) addSiteGoals(t *Table) {
	for _, l := range rep.Opts.Latencies {
		rep.addSinkGoals(t, l)
		if len(rep.runsOf(CrawlerColly, l)) == 0 {
			continue
		}
		rep.sameCrawlGoal(t, l)
		rep.ratioGoal(t, l, CrawlerCluster, "pages/s", GoalClusterVsColly, true, SiteRun.PagesPerSecond)
		if l != 0 {
			continue
		}
		cpu := func(r SiteRun) float64 { return r.perPage(float64(r.CrawlerCPU)) }
		rep.ratioGoal(t, l, CrawlerCluster, "crawler CPU per page", 1, false, cpu)
		rep.costGoal(t, l, CrawlerCluster, "Redis CPU per stored page", fmt.Sprintf("≤ %.2f ms", msOf(GoalRedisCPUPerPage)),
			msOf(GoalRedisCPUPerPage), "%.3f ms", func(r SiteRun) float64 { return r.perPage(msOf(r.RedisCPU)) })
		rep.costGoal(t, l, CrawlerCluster, "Redis commands per stored page", fmt.Sprintf("≤ %.0f", GoalClusterRedisCmds),
			GoalClusterRedisCmds, "%.1f", func(r SiteRun) float64 { return r.perPage(float64(r.RedisCalls)) })
		rep.ratioGoal(t, l, CrawlerRun, "pages/s", GoalRunVsColly, true, SiteRun.PagesPerSecond)
		rep.ratioGoal(t, l, CrawlerRun, "crawler CPU per page", GoalRunCPUVsColly, false, cpu)
		rep.costGoal(t, l, CrawlerRun, "peak RSS", "≤ "+mib(GoalRunPeakRSS), float64(GoalRunPeakRSS)/(1<<20), "%.0f MiB",
			func(r SiteRun) float64 { return float64(r.PeakRSS) / (1 << 20) })
	}
}

// ratioGoal adds a goal on a crawler's f over colly's, round by round: at
// least goal when atLeast, else at most.
func (rep SiteReport) ratioGoal(t *Table, l time.Duration, name, what string, goal float64, atLeast bool,
	f func(SiteRun) float64) {
	colly := map[int]float64{}
	for _, r := range rep.runsOf(CrawlerColly, l) {
		colly[r.Round] = f(r)
	}
	var ratios []float64
	for _, r := range rep.runsOf(name, l) {
		if c := colly[r.Round]; c > 0 {
			ratios = append(ratios, f(r)/c)
		}
	}
	if len(ratios) == 0 {
		return
	}
	lo, hi := slices.Min(ratios), slices.Max(ratios)
	target, met := fmt.Sprintf("≥ %.1f× colly's", goal), lo >= goal
	if !atLeast {
		target, met = fmt.Sprintf("≤ %.1f× colly's", goal), hi <= goal
	}
	t.AddRow(fmt.Sprintf("%s, one site at %v: %s", crawlerLabel(name, rep.Opts), l, what),
		target, span("%.2f×", lo, hi), yesNo(met))
}

// costGoal adds a goal on a crawler's cost, met when its highest is at
// most goal.
func (rep SiteReport) costGoal(t *Table, l time.Duration, name, what, target string, goal float64, format string,
	f func(SiteRun) float64) {
	runs := rep.runsOf(name, l)
	if len(runs) == 0 {
		return
	}
	hi := f(runs[0])
	for _, r := range runs {
		hi = max(hi, f(r))
	}
	t.AddRow(fmt.Sprintf("%s, one site at %v: %s", crawlerLabel(name, rep.Opts), l, what), target,
		spanOf(runs, format, f), yesNo(hi <= goal))
}

// sameCrawlGoal checks that every crawler stored what a correct crawl
// stores, so that the comparison holds.
func (rep SiteReport) sameCrawlGoal(t *Table, l time.Duration) {
	worst := 0.0
	for _, r := range rep.Runs {
		if r.Latency == l {
			worst = max(worst, float64(abs64(r.Stored-r.Expected))/float64(max(r.Expected, 1)))
		}
	}
	t.AddRow(fmt.Sprintf("every crawler stores the same pages, one site at %v", l),
		fmt.Sprintf("within %.0f%%", 100*GoalSameCrawl), fmt.Sprintf("%.2f%% off at worst", 100*worst), yesNo(worst <= GoalSameCrawl))
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
