package ledger

import (
	"context"
	"fmt"

	"github.com/crawler-dev/crawler/cluster"
)

// AddSinkCounts adds to the job's per-sink counters what a process's
// sinks did with its records since the last call: counts maps a sink's
// name (its scheme) to results (accepted, retried, refused) and counts.
// One round trip.
func (l *Ledger) AddSinkCounts(ctx context.Context, counts map[string]map[string]int64) error {
	pipe := l.rdb.Pipeline()
	for name, results := range counts {
		for result, n := range results {
			if n != 0 {
				pipe.HIncrBy(ctx, l.keys.Stats(), cluster.SinkStat(name, result), n)
			}
		}
	}
	if pipe.Len() == 0 {
		return nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("count sink records: %w", err)
	}
	return nil
}
