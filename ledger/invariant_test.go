package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/queue"
)

// The shape of the random runs: how many, how long, over how many pages
// and slaves, and the lease every take asks for.
const (
	runs   = 12
	steps  = 250
	pages  = 30
	slaves = 2
	lease  = time.Minute
)

// bands are the priorities of the job's tasks: its slave queues are kept
// in a band per priority (cluster.JobKeys.Band), each task admitted at
// one of them.
var bands = []int{4, 0, -2}

// TestLedger_invariant drives seeded random sequences of a job's steps —
// admit (new links and duplicates, a page admitted twice under its
// once-guard), take, ack (stored, failed, skipped, dead-lettered; twice,
// and by a holder whose delivery lapsed), hand back (released or
// requeued), a lease that lapses and is reclaimed for redelivery, a dead
// slave's tasks moved, a steal, a cancel carried out (with and without
// finishing), a stop on a budget (max_bytes or max_duration), the job
// submitted anew once finished (its counters reset), paused and resumed
// (which change no counter and no queue) — every admission counted
// against a page budget (max_pages, max_pages_per_host over two hosts) —
// and checks after every step that
//
//	discovered = stored + failed + skipped + duplicates + cancelled + queued + in flight
//
// and that no more pages were admitted than the budget allows. Tasks
// have priorities (bands), and every queued task waits in its own band. On a real Redis a lease lapses by its deadline being moved into the past
// (what the clock passing it does); on a miniredis by the server's clock
// moved past it. CRAWLER_LEDGER_SEED replays one seed.
func TestLedger_invariant(t *testing.T) {
	seeds := make([]uint64, runs)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	if v := os.Getenv("CRAWLER_LEDGER_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CRAWLER_LEDGER_SEED=%q is not a seed (a number)", v)
		}
		seeds = []uint64{n}
	}
	t.Run("redis", func(t *testing.T) {
		refused := map[string]int{}
		for _, seed := range seeds {
			rdb, keys := testenv.Redis(t)
			j := newJobRun(t, rdb, keys.Job(fmt.Sprintf("prop%d", seed)), seed)
			j.lapse = j.moveDeadline
			j.run(t)
			for f := range j.refused {
				refused[f]++
			}
		}
		for _, f := range []string{cluster.StatSkippedMaxPages, cluster.StatSkippedMaxPagesPerHost, cluster.StatSkippedMaxBytes} {
			if refused[f] == 0 {
				t.Errorf("no run refused a link for %s: the budget was never reached", f)
			}
		}
	})
	t.Run("moved clock", func(t *testing.T) {
		for _, seed := range seeds {
			rdb, keys, clock := testenv.MovedRedis(t)
			j := newJobRun(t, rdb, keys.Job(fmt.Sprintf("prop%d", seed)), seed)
			j.lapse = func(ctx context.Context, _ int, _ string) error {
				clock.Advance(lease + time.Millisecond)
				return nil
			}
			j.run(t)
		}
	})
}

// jobRun is one random sequence of steps on one job.
type jobRun struct {
	ctx    context.Context
	rdb    redis.UniversalClient
	jk     cluster.JobKeys
	seed   uint64
	r      *rand.Rand
	filter *dedup.Filter
	queues *queue.Queue
	ledger *ledger.Ledger
	// held are the tasks each slave was delivered and has not acked or
	// handed back: some of them lapsed since, and were delivered again.
	held [slaves][]string
	// acked are tasks acked once, to be acked again.
	acked []string
	// lapse makes the lease of task, delivered to slave, lapse.
	lapse func(ctx context.Context, slave int, task string) error
	log   []string
	// budget is what every admission is counted against, and refused
	// whether it refused a link for each of its bounds (by skipped field).
	budget  dedup.Budget
	refused map[string]bool
}

func newJobRun(t *testing.T, rdb redis.UniversalClient, jk cluster.JobKeys, seed uint64) *jobRun {
	t.Helper()
	f, err := dedup.New(rdb, dedup.Options{Mode: dedup.ModeExact, Namespace: jk.Dedup(), Window: 24 * time.Hour,
		Granularity: time.Hour, Capacity: 10_000, ErrorRate: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 0x6c6564676572))
	budget := dedup.Budget{State: jk.State(), Key: jk.Budget(), MaxPages: int64(pages/2 + r.IntN(pages)),
		MaxPagesPerHost: int64(pages/4 + r.IntN(pages/2)), SkipField: cluster.StatSkipped}
	j := &jobRun{ctx: context.Background(), rdb: rdb, jk: jk, seed: seed, r: r,
		filter: f, queues: queue.New(rdb, jk).WithBands(bands), ledger: ledger.New(rdb, jk), budget: budget, refused: map[string]bool{}}
	if _, err := j.ledger.Submit(j.ctx, []byte(`{"name":"prop"}`), jk.Seeds()+":staged", time.Now()); err != nil {
		t.Fatal(err)
	}
	return j
}

// moveDeadline lapses task's lease on a real Redis: its deadline is moved
// into the past.
func (j *jobRun) moveDeadline(ctx context.Context, slave int, task string) error {
	return j.rdb.ZAddXX(ctx, j.jk.Inflight(slave), redis.Z{Score: 1, Member: task}).Err()
}

func (j *jobRun) run(t *testing.T) {
	t.Helper()
	ops := []struct {
		name string
		do   func() error
	}{
		{"admit", j.admit}, {"admit", j.admit}, {"take", j.take}, {"take", j.take},
		{"ack", j.ack}, {"ack", j.ack}, {"ack again", j.ackAgain}, {"release", j.handBack(false)},
		{"requeue", j.handBack(true)}, {"lapse", j.lapseOne}, {"move dead slave's", j.moveDead},
		{"steal", j.steal}, {"cancel", j.cancel}, {"budget stop", j.budgetStop}, {"reset", j.reset},
		{"pause or resume", j.pauseOrResume},
	}
	for i := range steps {
		s := ops[j.r.IntN(len(ops))]
		if err := s.do(); err != nil {
			t.Fatalf("seed %d step %d (%s): %v\nsteps: %s", j.seed, i, s.name, err, strings.Join(j.log, "; "))
		}
		if msg := j.check(); msg != "" {
			t.Fatalf("seed %d (replay: CRAWLER_LEDGER_SEED=%d) after step %d (%s): %s\nsteps: %s",
				j.seed, j.seed, i, s.name, msg, strings.Join(j.log, "; "))
		}
	}
}

func (j *jobRun) note(format string, args ...any) {
	j.log = append(j.log, fmt.Sprintf(format, args...))
}

// admit offers one to five links of the site's pages, some seen before,
// as one list page's links; now and then a page is admitted again under
// the once-guard it was admitted with.
func (j *jobRun) admit() error {
	n := 1 + j.r.IntN(5)
	var cands []dedup.Candidate
	for range n {
		url := "https://" + []string{"example.com", "example.org"}[j.r.IntN(2)] + "/p/" + strconv.Itoa(j.r.IntN(pages))
		fp := canon.RequestFingerprint("GET", url, nil)
		slave := int(fp[0]) % slaves
		p := bands[j.r.IntN(len(bands))]
		task := cluster.Task{URL: url, FP: fp.String(), Job: "prop", Priority: p}.Encode()
		cands = append(cands, dedup.Candidate{FP: fp, Queue: j.jk.Band(slave, p), Payload: task,
			Counter: cluster.SlaveStat(cluster.StatRouted, slave)})
	}
	b := dedup.Batch{Candidates: cands, Stats: j.jk.Stats(), NewField: cluster.StatRouted, DupField: cluster.StatDuplicates,
		OnceKey: j.jk.Committed(1), OnceMember: "list" + strconv.Itoa(j.r.IntN(3*steps)), Budget: &j.budget}
	res, err := j.filter.Admit(j.ctx, b)
	j.note("admit %d (%s) applied before %v", n, b.OnceMember, res.AlreadyApplied)
	return err
}

func (j *jobRun) take() error {
	s := j.r.IntN(slaves)
	ds, err := j.queues.Slave(s).Take(j.ctx, 1+j.r.IntN(3), lease)
	j.held[s] = append(j.held[s], queue.Entries(ds)...)
	j.note("take %d by %d", len(ds), s)
	return err
}

// pick takes up to n of slave's held tasks off its list, at random.
func (j *jobRun) pick(slave, n int) []string {
	var out []string
	for range n {
		h := j.held[slave]
		if len(h) == 0 {
			break
		}
		i := j.r.IntN(len(h))
		out = append(out, h[i])
		j.held[slave] = append(h[:i], h[i+1:]...)
	}
	return out
}

// ack acknowledges up to three of a slave's deliveries, each with a
// random outcome; one may be listed twice.
func (j *jobRun) ack() error {
	s := j.r.IntN(slaves)
	tasks := j.pick(s, 1+j.r.IntN(3))
	var outs []ledger.Outcome
	for _, task := range tasks {
		outs = append(outs, j.outcome(task))
	}
	if len(tasks) > 0 && j.r.IntN(4) == 0 {
		outs = append(outs, j.outcome(tasks[0]))
	}
	j.acked = append(j.acked, tasks...)
	n, err := j.ledger.Ack(j.ctx, s, outs)
	j.note("ack %d by %d: %d counted", len(outs), s, n)
	return err
}

func (j *jobRun) outcome(task string) ledger.Outcome {
	switch j.r.IntN(5) {
	case 0:
		return ledger.Outcome{Task: task, Failed: true}
	case 1:
		return ledger.Outcome{Task: task, Failed: true, DeadLetter: true}
	case 2:
		return ledger.Outcome{Task: task, Skipped: cluster.StatSkippedNotHTML}
	}
	return ledger.Outcome{Task: task, NearDuplicate: j.r.IntN(2) == 0}
}

// ackAgain acknowledges a task acked before, by either slave.
func (j *jobRun) ackAgain() error {
	if len(j.acked) == 0 {
		return nil
	}
	task, s := j.acked[j.r.IntN(len(j.acked))], j.r.IntN(slaves)
	n, err := j.ledger.Ack(j.ctx, s, []ledger.Outcome{j.outcome(task)})
	j.note("ack again by %d: %d counted", s, n)
	return err
}

// handBack hands up to two of a slave's deliveries back: requeued (the
// delivery counts) or released (it does not).
func (j *jobRun) handBack(requeue bool) func() error {
	return func() error {
		s := j.r.IntN(slaves)
		tasks := j.pick(s, 1+j.r.IntN(2))
		l := j.queues.Slave(s)
		hand := l.Release
		if requeue {
			hand = l.Requeue
		}
		n, err := hand(j.ctx, tasks)
		j.note("hand back %d of %d by %d (requeue %v)", n, len(tasks), s, requeue)
		return err
	}
}

// lapseOne lets a delivery's lease lapse and reclaims the lapsed tasks for
// redelivery; its holder keeps it, and may ack it late.
func (j *jobRun) lapseOne() error {
	s := j.r.IntN(slaves)
	if len(j.held[s]) == 0 {
		return nil
	}
	if err := j.lapse(j.ctx, s, j.held[s][j.r.IntN(len(j.held[s]))]); err != nil {
		return err
	}
	total := 0
	for id := range slaves {
		n, err := j.queues.Slave(id).Reclaim(j.ctx)
		if err != nil {
			return err
		}
		total += n
	}
	j.note("lapse on %d: %d reclaimed", s, total)
	return nil
}

// moveDead moves a slave's tasks, queued and in flight, to the other, as
// the master does a dead slave's; its holder may still ack them late.
func (j *jobRun) moveDead() error {
	from := j.r.IntN(slaves)
	queued, inflight, err := j.queues.Items(j.ctx, from)
	if err != nil {
		return err
	}
	var moves []queue.Move
	for _, task := range append(inflight, queued...) {
		moves = append(moves, queue.Move{Task: task, To: (from + 1) % slaves})
	}
	n, err := j.queues.MoveFromSlave(j.ctx, from, moves)
	j.note("move %d of %d from %d", n, len(moves), from)
	return err
}

// carryOutCancel is the ledger's cancel step as a master carries it out,
// opened without the master's fence.
var carryOutCancel = ledger.Steps.Load("lua/unfenced.lua", "lua/kinds.lua", "lua/outbox.lua", "lua/cancel.lua")

// cancel carries a cancel out once in a while: it drops what is queued
// and what lapsed, counted cancelled; the links admitted after it are
// queued again (a master stops admitting; the ledger does not care).
func (j *jobRun) cancel() error {
	if j.r.IntN(4) != 0 {
		return nil
	}
	keys := append(ledger.CancelKeys(j.jk, slaves, bands), j.jk.Stats())
	args := append(ledger.CarryOutArgs(time.Now(), j.r.IntN(2) == 0), "*")
	c, err := ledger.ParseCancel(carryOutCancel.Run(j.ctx, j.rdb, keys, args...))
	j.note("cancel: %d dropped, outcome %d", c.Dropped, c.Outcome)
	return err
}

// budgetStop stops the round on a budget once in a while, as a master
// does on max_bytes or max_duration: what is queued and what lapsed is
// dropped, counted skipped; every admission after it is refused.
func (j *jobRun) budgetStop() error {
	if j.r.IntN(8) != 0 {
		return nil
	}
	keys := append(ledger.CancelKeys(j.jk, slaves, bands), j.jk.Stats())
	args := append(ledger.BudgetStopArgs(time.Now(), jobspec.BudgetMaxBytes, cluster.StatSkippedMaxBytes), "*")
	c, err := ledger.ParseCancel(carryOutCancel.Run(j.ctx, j.rdb, keys, args...))
	j.note("budget stop: %d dropped, outcome %d", c.Dropped, c.Outcome)
	return err
}

// reset submits the job anew once a cancel finished it and nothing of it
// is queued or in flight, as client submit does a finished job: its
// counters restart.
func (j *jobRun) reset() error {
	state, err := j.rdb.HGet(j.ctx, j.jk.State(), cluster.StateField).Result()
	if err != nil && err != redis.Nil {
		return err
	}
	d, err := j.queues.Depth(j.ctx, slaves)
	if queued, inflight := d.Total(); err != nil || state == cluster.StatePending || state == cluster.StatePaused ||
		queued+inflight > 0 {
		return err
	}
	active, err := j.ledger.Submit(j.ctx, []byte(`{"name":"prop"}`), j.jk.Seeds()+":staged", time.Now())
	j.note("submit anew (state %q): active %q", state, active)
	if err == nil && active != "" {
		err = fmt.Errorf("a %s job was not submitted anew: %s", state, active)
	}
	return err
}

func (j *jobRun) steal() error {
	s := j.r.IntN(slaves)
	n, _, err := j.queues.Slave(s).Steal(j.ctx, []int{0, 1}, 10, 1)
	j.note("steal %d by %d", n, s)
	return err
}

// check reads the counters and the queues and says how the invariant
// fails, or "".
func (j *jobRun) check() string {
	stats, err := j.rdb.HGetAll(j.ctx, j.jk.Stats()).Result()
	if err != nil {
		return err.Error()
	}
	n := func(f string) int64 { v, _ := strconv.ParseInt(stats[f], 10, 64); return v }
	d, err := j.queues.Depth(j.ctx, slaves)
	if err != nil {
		return err.Error()
	}
	queued, inflight := d.Total()
	discovered := n(cluster.StatRouted) + n(cluster.StatDuplicates)
	settled := n(cluster.StatStored) + n(cluster.StatFailed) + n(cluster.StatSkipped) + n(cluster.StatDuplicates) +
		n(cluster.StatCancelled)
	if discovered != settled+queued+inflight {
		return fmt.Sprintf("discovered %d != settled %d + queued %d + in flight %d (stats %v)",
			discovered, settled, queued, inflight, stats)
	}
	if msg := j.checkBudget(); msg != "" {
		return msg
	}
	if msg := j.checkBands(); msg != "" {
		return msg
	}
	for _, f := range []string{cluster.StatSkippedMaxPages, cluster.StatSkippedMaxPagesPerHost, cluster.StatSkippedMaxBytes} {
		if n(f) > 0 {
			j.refused[f] = true
		}
	}
	var perSlave int64
	for s := range slaves {
		perSlave += n(cluster.SlaveStat(cluster.StatStored, s))
	}
	if perSlave != n(cluster.StatStored) {
		return fmt.Sprintf("slaves' stored %d != the job's %d", perSlave, n(cluster.StatStored))
	}
	return ""
}

// checkBands says which queued task waits in a band not its own, or "".
func (j *jobRun) checkBands() string {
	for s := range slaves {
		for _, p := range bands {
			tasks, err := j.rdb.LRange(j.ctx, j.jk.Band(s, p), 0, -1).Result()
			if err != nil {
				return err.Error()
			}
			for _, raw := range tasks {
				if task, err := cluster.DecodeTask(raw); err != nil || task.Priority != p {
					return fmt.Sprintf("task %s (%v) waits in slave %d's band %d", raw, err, s, p)
				}
			}
		}
	}
	return ""
}

// pauseOrResume pauses the job, or resumes it when it is paused: neither
// changes a counter or a queue, and a resume restores the state paused.
// A finished job is refused pausing with the ledger's sentinel; one that
// a cancel finished while paused keeps no trace of the pause.
func (j *jobRun) pauseOrResume() error {
	before, err := j.counted()
	if err != nil {
		return err
	}
	state, err := j.rdb.HGet(j.ctx, j.jk.State(), cluster.StateField).Result()
	if err != nil {
		return err
	}
	if n, err := j.rdb.HExists(j.ctx, j.jk.State(), cluster.StatePausedFrom).Result(); err != nil || n != (state == cluster.StatePaused) {
		return fmt.Errorf("state %s with a paused_from field %v (%v)", state, n, err)
	}
	var got string
	if state == cluster.StatePaused {
		got, err = j.ledger.Resume(j.ctx)
	} else {
		got, err = j.ledger.Pause(j.ctx, time.Now())
	}
	j.note("pause or resume (state %q): %q, %v", state, got, err)
	switch {
	case errors.Is(err, ledger.ErrFinished) && state == cluster.StateFinished:
	case err != nil:
		return err
	case state != cluster.StatePaused && got != state:
		return fmt.Errorf("paused from %q, the ledger says from %q", state, got)
	}
	after, err := j.counted()
	if err != nil {
		return err
	}
	if before != after {
		return fmt.Errorf("pause or resume changed what is counted or queued: %s, then %s", before, after)
	}
	return nil
}

// counted is the job's counters and queues as one string.
func (j *jobRun) counted() (string, error) {
	stats, err := j.rdb.HGetAll(j.ctx, j.jk.Stats()).Result()
	if err != nil {
		return "", err
	}
	d, err := j.queues.Depth(j.ctx, slaves)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(stats, d), nil
}

// checkBudget says how the admissions overran the page budget, or "".
func (j *jobRun) checkBudget() string {
	b, err := j.rdb.HGetAll(j.ctx, j.jk.Budget()).Result()
	if err != nil {
		return err.Error()
	}
	for field, v := range b {
		n, _ := strconv.ParseInt(v, 10, 64)
		switch {
		case field == cluster.BudgetPages && n > j.budget.MaxPages:
			return fmt.Sprintf("%d pages admitted, past max_pages %d", n, j.budget.MaxPages)
		case strings.HasPrefix(field, cluster.BudgetHostPrefix) && n > j.budget.MaxPagesPerHost:
			return fmt.Sprintf("%d pages of %s admitted, past max_pages_per_host %d", n, field, j.budget.MaxPagesPerHost)
		}
	}
	return ""
}
