package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// Submit stores the job's spec (JSON) and marks it pending, its seeds the
// ones written to the staging list staged beforehand, unless a job of
// that name is pending or running: then it returns that job's state and
// changes nothing (the staged seeds are dropped). A finished job is
// submitted anew: its counters restart, while its dupefilter keeps what
// it saw inside the window. It returns "" once submitted.
func (l *Ledger) Submit(ctx context.Context, spec []byte, staged string, at time.Time) (active string, err error) {
	res, err := submitScript.Run(ctx, l.rdb, []string{l.keys.Spec(), l.keys.State(), l.keys.Stats(), l.keys.Seeds(), staged, l.keys.Budget()},
		spec, at.UTC().Format(time.RFC3339Nano)).Text()
	if err != nil {
		return "", fmt.Errorf("submit: %w", err)
	}
	if res == "ok" {
		return "", nil
	}
	return res, nil
}

// Retry re-enqueues failed detail tasks (each with Retry set) for the
// master to route, but those whose fingerprint is already being retried;
// a finished job goes back to running. It returns how many it enqueued.
func (l *Ledger) Retry(ctx context.Context, tasks []cluster.Task) (int, error) {
	if len(tasks) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 2*len(tasks))
	for _, t := range tasks {
		args = append(args, t.FP, t.Encode())
	}
	n, err := retryScript.Run(ctx, l.rdb, []string{l.keys.Retry(), l.keys.Retrying(), l.keys.State()}, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("retry %d failed tasks: %w", len(tasks), err)
	}
	return n, nil
}
