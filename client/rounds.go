package client

import (
	"strconv"
	"strings"

	"github.com/crawler-dev/crawler/cluster"
)

// RoundCounts are what one round's visits of detail pages found: they add
// up to the pages stored in that round.
type RoundCounts struct {
	New         int64 `json:"new"`
	Changed     int64 `json:"changed"`
	Unchanged   int64 `json:"unchanged"`
	NotModified int64 `json:"not_modified"`
	// Bytes is the size of the page bodies fetched (list pages and item
	// pages stored), counted against budget.max_bytes.
	Bytes int64 `json:"bytes"`
	// SkippedNotDue counts the known pages an adaptive re-crawl did not
	// check, not due yet (recrawl: {mode: adaptive}); they are in
	// skipped, not in stored.
	SkippedNotDue int64 `json:"skipped_not_due,omitempty"`
}

// add counts n under stat, one of cluster.RecrawlStats.
func (r *RoundCounts) add(stat string, n int64) {
	switch stat {
	case cluster.StatNew:
		r.New += n
	case cluster.StatChanged:
		r.Changed += n
	case cluster.StatUnchanged:
		r.Unchanged += n
	case cluster.StatNotModified:
		r.NotModified += n
	case cluster.StatBytes:
		r.Bytes += n
	case cluster.StatSkippedNotDue:
		r.SkippedNotDue += n
	}
}

// recrawlCounts reads the job's totals and per-round counts ("changed@2")
// from its stats.
func recrawlCounts(stats map[string]string) (total RoundCounts, rounds map[string]RoundCounts) {
	for k, v := range stats {
		n, _ := strconv.ParseInt(v, 10, 64)
		stat, round, perRound := strings.Cut(k, "@")
		if !perRound {
			total.add(k, n)
			continue
		}
		if rounds == nil {
			rounds = map[string]RoundCounts{}
		}
		r := rounds[round]
		r.add(stat, n)
		rounds[round] = r
	}
	return total, rounds
}
