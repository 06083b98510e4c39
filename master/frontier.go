package master

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/queue"
)

// seedBatch is how many seeds one script call queues.
const seedBatch = 1000

// frontier is one job's list-page frontier in Redis, acted on under a
// fencing token.
type frontier struct {
	rdb       redis.UniversalClient
	keys      cluster.JobKeys
	maxSlaves int
	fence     int64
	itemKinds string // the job's item kinds, space-separated, for kinds.lua
	budget    jobspec.Budget
	bands     []int // the priorities of the bands of its slave queues (nil: none)
	clock     *serverClock
}

// runAdmitting runs a script that queues list pages (seed, queue_next):
// it counts them by kind (runCounting) and against the job's page budget
// (budget.lua), whose keys and arguments go before the kinds'.
func (f *frontier) runAdmitting(ctx context.Context, s *redis.Script, keys []string, args ...any) *redis.Cmd {
	keys = append(keys, f.keys.State(), f.keys.Budget())
	args = append(args, flag(f.budget.Bounded()), f.budget.MaxPages, f.budget.MaxPagesPerHost)
	return f.runCounting(ctx, s, keys, args...)
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// stamp is the cluster's time now, as a state hash records it (started_at,
// finished_at, cancelled_at).
func (f *frontier) stamp() string { return f.clock.now().UTC().Format(time.RFC3339) }

// runCounting runs a script that counts list pages by kind (kinds.lua): it
// appends the stats key and the item kinds to keys and args.
func (f *frontier) runCounting(ctx context.Context, s *redis.Script, keys []string, args ...any) *redis.Cmd {
	return f.run(ctx, s, append(keys, f.keys.Stats()), append(args, f.itemKinds)...)
}

// run runs a fenced script with the fence prepended to keys and args.
func (f *frontier) run(ctx context.Context, s *redis.Script, keys []string, args ...any) *redis.Cmd {
	keys = append([]string{f.keys.Fence()}, keys...)
	args = append([]any{strconv.FormatInt(f.fence, 10)}, args...)
	return s.Run(ctx, f.rdb, keys, args...)
}

// pageRef is a list page with its fingerprint, ready for the frontier.
type pageRef struct {
	fp   string
	page cluster.ListPage
}

func pairs(refs []pageRef) []any {
	args := make([]any, 0, 2*len(refs))
	for _, r := range refs {
		args = append(args, r.fp, r.page.Encode())
	}
	return args
}

// startRound marks the job running at round, with no seed queued yet; it
// reports false if the job was already at that round.
func (f *frontier) startRound(ctx context.Context, round int64) (bool, error) {
	keys := []string{f.keys.State(), f.keys.ListSeen(round - 1), f.keys.Committed(round - 1), f.keys.Budget()}
	n, err := f.run(ctx, startRoundScript, keys, round, f.stamp()).Int()
	if err != nil {
		return false, fmt.Errorf("start round %d: %w", round, codes.Translate(err))
	}
	return n == 1, nil
}

// seed queues the next batch of the round's seeds and returns how many are
// left, or seedOtherRound if the job moved on to another round.
func (f *frontier) seed(ctx context.Context, round int64) (int64, error) {
	keys := []string{f.keys.State(), f.keys.Seeds(), f.keys.Frontier(), f.keys.ListSeen(round)}
	left, err := f.runAdmitting(ctx, seedScript, keys, round, seedBatch).Int64()
	if err != nil {
		return 0, fmt.Errorf("queue seeds of round %d: %w", round, codes.Translate(err))
	}
	return left, nil
}

// queueNext appends the next list pages not yet seen this round to the
// frontier, ahead of the commit of the page that links them.
func (f *frontier) queueNext(ctx context.Context, round int64, next []pageRef) error {
	if len(next) == 0 {
		return nil
	}
	keys := []string{f.keys.Frontier(), f.keys.ListSeen(round)}
	if err := f.runAdmitting(ctx, queueNextScript, keys, pairs(next)...).Err(); err != nil {
		return fmt.Errorf("queue next list pages: %w", codes.Translate(err))
	}
	return nil
}

// commit finishes list page member, queueing next, and adds counters to the
// job's stats.
func (f *frontier) commit(ctx context.Context, round int64, member string, counters map[string]int64, next []pageRef) error {
	keys := []string{f.keys.FrontierActive(), f.keys.Frontier(), f.keys.ListSeen(round), f.keys.Stats(), f.keys.ListAttempts()}
	return f.commitOn(ctx, keys, member, counters, next)
}

// commitFound finishes a Found entry as commit finishes a list page.
func (f *frontier) commitFound(ctx context.Context, round int64, member string, counters map[string]int64) error {
	keys := []string{f.keys.FoundActive(), f.keys.Found(), f.keys.ListSeen(round), f.keys.Stats(), f.keys.FoundAttempts()}
	return f.commitOn(ctx, keys, member, counters, nil)
}

// foundCommit is one Found entry of a batch to commit, with the counters
// it adds.
type foundCommit struct {
	entry    string
	counters map[string]int64
}

// commitFoundBatch finishes several Found entries in one script call, as
// commitFound finishes each.
func (f *frontier) commitFoundBatch(ctx context.Context, batch []foundCommit) error {
	if len(batch) == 0 {
		return nil
	}
	keys := []string{f.keys.FoundActive(), f.keys.Found(), f.keys.Stats(), f.keys.FoundAttempts()}
	args := make([]any, 0, 1+5*len(batch))
	args = append(args, len(batch))
	for _, c := range batch {
		args = append(args, c.entry)
		for _, field := range queue.AttemptFields(c.entry) {
			args = append(args, field)
		}
		args = appendCounters(args, c.counters)
	}
	if err := f.run(ctx, commitFoundScript, keys, args...).Err(); err != nil {
		return fmt.Errorf("commit %d found entries: %w", len(batch), codes.Translate(err))
	}
	return nil
}

// commitOn runs the commit script on a leased list's keys.
func (f *frontier) commitOn(ctx context.Context, keys []string, member string, counters map[string]int64, next []pageRef) error {
	args := make([]any, 0, 4+2*len(counters)+2*len(next))
	args = appendCounters(append(args, member), counters)
	for _, field := range queue.AttemptFields(member) {
		args = append(args, field)
	}
	args = append(args, pairs(next)...)
	if err := f.run(ctx, commitListScript, keys, args...).Err(); err != nil {
		return fmt.Errorf("commit list page: %w", codes.Translate(err))
	}
	return nil
}

// appendCounters appends how many of counters are not zero, then their
// name/increment pairs: a zero would cost the script an HINCRBY (one per
// list page, on a site whose pages hold no invalid links) for nothing.
func appendCounters(args []any, counters map[string]int64) []any {
	at := len(args)
	args = append(args, 0)
	for name, n := range counters {
		if n != 0 {
			args = append(args, name, n)
		}
	}
	args[at] = (len(args) - at - 1) / 2
	return args
}

// tryFinish marks the round finished if no work is left (the job
// ledger's finish step); it reports ledger.RoundFinished then,
// ledger.RoundCancel if the job is to be cancelled, ledger.RoundPaused if
// it is paused, else ledger.RoundRunning.
func (f *frontier) tryFinish(ctx context.Context, nextRound time.Time) (int, error) {
	keys := make([]string, 0, 11+2*f.maxSlaves*max(1, len(f.bands)))
	keys = append(keys, f.keys.State(), f.keys.Frontier(), f.keys.FrontierActive(), f.keys.Retry(), f.keys.Seeds(),
		f.keys.RenderWait())
	keys = append(keys, f.keys.QueuePairs(f.maxSlaves, f.bands)...)
	keys = append(keys, f.keys.Found(), f.keys.FoundActive()) // checked as one more queue
	keys = append(keys, ledger.OutboxKeys(f.keys)...)
	next := ""
	if !nextRound.IsZero() {
		next = nextRound.UTC().Format(time.RFC3339Nano) // whole seconds would start a 1s recrawl early
	}
	n, err := f.run(ctx, finishScript, keys, f.stamp(), next).Int()
	if err != nil {
		return ledger.RoundRunning, fmt.Errorf("check finished: %w", codes.Translate(err))
	}
	return n, nil
}

// cancel stops the job as client cancel asked (the job ledger's cancel
// step, ledger.Cancelling): its queued tasks, and those in flight whose
// lease lapsed, are dropped and counted as cancelled. With finish set,
// the job is finished once none of its tasks is in flight any more. It
// returns the tasks dropped and whether the job is finished.
func (f *frontier) cancel(ctx context.Context, finish bool) (int64, bool, error) {
	c, err := ledger.ParseCancel(f.runCounting(ctx, cancelScript, ledger.CancelKeys(f.keys, f.maxSlaves, f.bands),
		ledger.CarryOutArgs(f.clock.now(), finish)...))
	if err != nil {
		return 0, false, fmt.Errorf("cancel job: %w", codes.Translate(err))
	}
	return c.Dropped, c.Outcome == ledger.CancelFinished, nil
}

// jobState is a job's state hash, as a runner reads it.
type jobState struct {
	state           string
	round           int64
	nextRound       time.Time
	cancelRequested bool
	cancelled       bool // client cancel finished it
}

// state reads the job's state hash.
func (f *frontier) state(ctx context.Context) (jobState, error) {
	m, err := f.rdb.HGetAll(ctx, f.keys.State()).Result()
	if err != nil {
		return jobState{}, fmt.Errorf("read job state: %w", err)
	}
	s := jobState{state: m[cluster.StateField]}
	s.round, _ = strconv.ParseInt(m[cluster.StateRound], 10, 64)
	s.nextRound, _ = time.Parse(time.RFC3339, m[cluster.StateNextRoundAt])
	_, s.cancelRequested = m[cluster.StateCancel]
	_, s.cancelled = m[cluster.StateCancelledAt]
	return s, nil
}
