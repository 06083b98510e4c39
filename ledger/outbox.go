package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// OutboxMax is how many events a job's outbox keeps: when nobody sends
// them (no master runs with a webhook secret), the oldest are dropped.
const OutboxMax = 100

// OutboxKeys are the keys a script that composes lua/outbox.lua appends
// to its own (after which kinds.lua's stats key may follow): the job's
// stats, its outbox and its event counter.
func OutboxKeys(jk cluster.JobKeys) []string {
	return []string{jk.Stats(), jk.Outbox(), jk.OutboxSeq()}
}

// RecordEvent appends event (one of jobspec.Events) to the job's outbox,
// at at, with the job's state and counters as they are: the webhooks that
// ask for it are sent the event (package notify). It is the hook of a
// transition made by a step that does not compose lua/outbox.lua in its
// own script (pause: jobspec.EventPaused); call it right after the
// transition. It returns the event's ID, or 0 when the job does not
// exist.
func (l *Ledger) RecordEvent(ctx context.Context, event string, at time.Time) (int64, error) {
	keys := append([]string{l.keys.State()}, OutboxKeys(l.keys)...)
	id, err := recordScript.Run(ctx, l.rdb, keys, event, stamp(at)).Int64()
	if err != nil {
		return 0, fmt.Errorf("record %s event: %w", event, err)
	}
	return id, nil
}
