package ledger

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// Ledger is one job's ledger: its counters and the steps that change them.
type Ledger struct {
	rdb  redis.UniversalClient
	keys cluster.JobKeys
}

// New returns the ledger of the job whose keys are keys.
func New(rdb redis.UniversalClient, keys cluster.JobKeys) *Ledger {
	return &Ledger{rdb: rdb, keys: keys}
}

// Ack acknowledges tasks slave finished, and counts their outcomes in the
// job's stats, the job's and slave's own (retried tasks are checked off
// the retrying set); tasks no longer in flight on slave are not counted
// again. It returns how many were counted.
func (l *Ledger) Ack(ctx context.Context, slave int, outcomes []Outcome) (int, error) {
	if len(outcomes) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 2+7*len(outcomes))
	args = append(args, cluster.SlaveStat(cluster.StatStored, slave), cluster.SlaveStat(cluster.StatFailed, slave))
	for _, o := range outcomes {
		args = append(args, o.Task, o.code(), flag(o.NearDuplicate), o.Retries, o.FP, flag(o.DeadLetter), o.counted())
	}
	keys := []string{l.keys.Inflight(slave), l.keys.Stats(), l.keys.Retrying(), l.keys.TaskAttempts()}
	n, err := ackScript.Run(ctx, l.rdb, keys, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("ack %d tasks of slave %d: %w", len(outcomes), slave, err)
	}
	return n, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
