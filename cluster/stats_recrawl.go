package cluster

import "strconv"

// What a re-crawl found of each detail page it stored, counted in the
// job's Stats hash over all rounds and per round (RoundStat). They add up
// to stored: new + changed + unchanged + not_modified = stored.
const (
	StatNew         = "new"          // pages stored for the first time (version 1)
	StatChanged     = "changed"      // pages whose extracted fields changed (version bumped)
	StatUnchanged   = "unchanged"    // pages sent again whose fields hash the same
	StatNotModified = "not_modified" // pages the site answered 304 for
)

// StatSkippedNotDue counts the known pages an adaptive re-crawl left
// unchecked in a round, their next check later (in skipped: they are
// routed and not fetched), over all rounds and per round (RoundStat).
const StatSkippedNotDue = "skipped_not_due"

// RecrawlStats are the four counters above, in that order.
var RecrawlStats = []string{StatNew, StatChanged, StatUnchanged, StatNotModified}

// RoundStat is the per-round counter name for stat, e.g. "changed@2".
func RoundStat(stat string, round int64) string {
	return stat + "@" + strconv.FormatInt(round, 10)
}
