package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// CancelOutcome is what one cancel step did (cancel.lua's R_ replies).
type CancelOutcome int

// The outcomes of a cancel step.
const (
	// CancelNoJob: the job does not exist.
	CancelNoJob CancelOutcome = -1
	// CancelFinishedAlready: the job is finished and runs no more rounds.
	CancelFinishedAlready CancelOutcome = 0
	// CancelAsked: the job is marked for its master to carry out.
	CancelAsked CancelOutcome = 1
	// CancelFinished: the step finished the job (or dropped its next
	// round).
	CancelFinished CancelOutcome = 2
	// CancelDraining: the step dropped what it could; tasks are still in
	// flight, or it was not to finish the job yet.
	CancelDraining CancelOutcome = 3
)

// Who acts in a cancel step (cancel.lua's A_ arguments).
const (
	actorAsk      = "ask"
	actorCarryOut = "carry-out"
	actorBudget   = "budget"
)

// Cancel is a cancel step's reply: what it did and how many tasks it
// dropped, counted cancelled.
type Cancel struct {
	Outcome CancelOutcome
	Dropped int64
}

// CancelKeys are the keys of the cancel step of a job whose slaves are
// numbered below maxSlaves and whose tasks have priorities (bands of the
// slave queues: cluster.JobKeys.QueuePairs), in cancel.lua's order, then
// outbox.lua's; kinds.lua's stats key follows them.
func CancelKeys(jk cluster.JobKeys, maxSlaves int, priorities []int) []string {
	keys := make([]string, 0, 13+2*maxSlaves*max(1, len(priorities)))
	keys = append(keys, jk.State(), jk.Owner(), jk.Stats(), jk.Frontier(), jk.FrontierActive(), jk.Retry(),
		jk.Retrying(), jk.TaskAttempts(), jk.ListAttempts(), jk.RenderWait())
	keys = append(keys, jk.QueuePairs(maxSlaves, priorities)...)
	return append(keys, OutboxKeys(jk)...)
}

// CarryOutArgs are the arguments of a master's cancel step at now: with
// finish, the job is finished once none of its tasks is in flight;
// without, its queued tasks are only dropped. kinds.lua's item kinds
// follow them.
func CarryOutArgs(now time.Time, finish bool) []any {
	return []any{stamp(now), flag(finish), actorCarryOut}
}

// BudgetStopArgs are the arguments of a master's stop of a round that
// reached budget (jobspec.BudgetMaxBytes, jobspec.BudgetMaxDuration) at
// now: a cancel's drop, its tasks and list pages counted as skipped for
// the budget (cluster.StatSkipped and skippedField), the budget recorded
// in the state so that nothing more is admitted. It never finishes the
// job: the round ends once nothing of it is left. kinds.lua's item kinds
// follow them.
func BudgetStopArgs(now time.Time, budget, skippedField string) []any {
	return []any{stamp(now), flag(false), actorBudget, budget, cluster.StatSkipped + " " + skippedField}
}

// ParseCancel reads a cancel step's reply.
func ParseCancel(cmd *redis.Cmd) (Cancel, error) {
	res, err := cmd.Int64Slice()
	if err != nil {
		return Cancel{}, err
	}
	if len(res) != 2 || res[0] < int64(CancelNoJob) || res[0] > int64(CancelDraining) {
		return Cancel{}, fmt.Errorf("unexpected reply %v", res)
	}
	return Cancel{Outcome: CancelOutcome(res[0]), Dropped: res[1]}, nil
}

// AskCancel asks for the job to be stopped, at now, as client cancel
// does: a job some master holds is marked for it to stop; a pending job,
// or one between rounds, that no master holds is finished here at once.
func (l *Ledger) AskCancel(ctx context.Context, now time.Time) (CancelOutcome, error) {
	keys := append(CancelKeys(l.keys, 0, nil), l.keys.Stats())
	c, err := ParseCancel(askCancelScript.Run(ctx, l.rdb, keys, stamp(now), flag(false), actorAsk, "*"))
	if err != nil {
		return 0, fmt.Errorf("ask to cancel: %w", err)
	}
	return c.Outcome, nil
}

// stamp is a time as a job's state hash records it.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
