package master

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/internal/ctxtime"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/queue"
)

// jobRunner drives one owned job through its rounds.
type jobRunner struct {
	m        *Master
	name     string
	keys     cluster.JobKeys
	fence    int64 // the fencing token of this master's lease on the job
	log      *zap.Logger
	spec     *jobspec.Job
	filter   *dedup.Filter
	frontier *frontier
	queues   *queue.Queue
	lists    *queue.Leased  // the frontier as a leased list
	found    *queue.Leased  // the links slaves found on item pages
	rules    *extract.Rules // the job's page kinds, compiled
	// byKind names the job's item kinds when it has more than one: their
	// links are admitted and counted kind by kind (nil: the job's counters
	// are its one item kind's).
	byKind   []string
	dl       *downloader.Job  // the job's request settings, cookies and robots.txt
	lost     atomic.Bool      // a commit found the fence taken: another master owns the job
	balanced *assign.Snapshot // the live slave table the queued tasks were last balanced over
	// depthTicks counts reclaim ticks, and holding names the slaves whose
	// queues held tasks at the last read (depth.go).
	depthTicks int
	holding    []int
	// renderKinds are the job's kinds whose pages are rendered: their
	// tasks go only to slaves that can render (render.go).
	renderKinds map[string]bool
	// byHost routes the job's item pages by host (reroute.go, hostRouteKey).
	byHost bool

	// pausing is set once client pause paused the round: nothing is taken
	// any more; stopTaking ends abandon, the wait of the round's list
	// pages not yet sent (pause.go).
	pausing    atomic.Bool
	abandon    context.Context
	stopTaking context.CancelFunc

	mu         sync.Mutex
	inProgress map[string]bool // list pages this runner's workers are processing
	foundHeld  map[string]bool // Found entries this runner's drain is routing
	pageDone   chan struct{}   // signalled when one of them is done with
}

func (r *jobRunner) run(ctx context.Context) error {
	if err := r.load(ctx); err != nil {
		return err
	}
	r.syncClock(ctx)
	for {
		s, err := r.frontier.state(ctx)
		if err != nil {
			r.warn(ctx, "read job state", zap.Error(err))
			if !sleep(ctx, r.m.opts.Tick) {
				return nil
			}
			continue
		}
		r.stateChanged(s)
		switch {
		case s.cancelRequested:
			if err := r.cancel(ctx); err != nil {
				return err
			}
		case s.state == cluster.StatePaused: // until client resume, or cancel
			if !sleep(ctx, r.m.opts.Tick) {
				return nil
			}
		case s.state == cluster.StateRunning:
			if err := r.runRound(ctx, s.round); err != nil {
				return err
			}
		case s.state == cluster.StateFinished && (!r.spec.Recurring() || s.nextRound.IsZero()):
			return nil
		case s.state == cluster.StateFinished && !r.roundDue(ctx, s.nextRound):
			if !sleep(ctx, r.untilRound(s.nextRound)) {
				return nil
			}
		default: // pending, or a recrawl is due
			if err := r.startRound(ctx, s.round+1); err != nil {
				if errors.Is(err, errFenced) {
					return err
				}
				r.warn(ctx, "start round", zap.Error(err))
				if !sleep(ctx, r.m.opts.Tick) {
					return nil
				}
			}
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// load reads the job's spec and builds its dupefilter.
func (r *jobRunner) load(ctx context.Context) error {
	raw, err := r.m.deps.Redis.Get(ctx, r.keys.Spec()).Bytes()
	if err != nil {
		return fmt.Errorf("read job spec: %w", err)
	}
	spec, err := jobspec.Decode(raw)
	if err != nil {
		return err
	}
	fopts := dedup.JobOptions(spec.Dedup, r.keys)
	fopts.MinBlockBits, fopts.CreateOnWrite = r.m.opts.DedupMinBlockBits, r.m.opts.DedupCreateOnWrite
	if fopts.Mode == dedup.ModeBloom {
		fopts.CacheBytes = r.m.opts.DedupCache
	}
	filter, err := dedup.New(r.m.deps.Redis, fopts)
	if err != nil {
		return fmt.Errorf("job %s: %w", r.name, err)
	}
	dl, err := r.m.dl.NewJob(spec)
	if err != nil {
		return err
	}
	rules, err := extract.CompileJob(spec)
	if err != nil {
		return fmt.Errorf("job %s: %w", r.name, err)
	}
	r.spec, r.filter, r.dl, r.rules = spec, filter, dl, rules
	r.renderKinds = spec.RenderKinds()
	r.byHost = spec.RoutesByHost()
	if names := spec.ItemKindNames(); len(names) > 1 && !spec.ShortForm() {
		r.byKind = names
	}
	r.frontier = &frontier{rdb: r.m.deps.Redis, keys: r.keys, maxSlaves: r.m.opts.MaxSlaves, fence: r.fence, clock: r.m.clock,
		itemKinds: itemKinds(spec, rules), budget: spec.Budget, bands: spec.QueueBands()}
	r.queues = queue.New(r.m.deps.Redis, r.keys).WithBands(spec.QueueBands())
	r.lists = queue.NewLeased(r.m.deps.Redis, queue.LeasedKeys{
		List: r.keys.Frontier(), Inflight: r.keys.FrontierActive(), Attempts: r.keys.ListAttempts()})
	r.found = queue.NewLeased(r.m.deps.Redis, queue.LeasedKeys{
		List: r.keys.Found(), Inflight: r.keys.FoundActive(), Attempts: r.keys.FoundAttempts()})
	r.inProgress, r.foundHeld = map[string]bool{}, map[string]bool{}
	r.pageDone = make(chan struct{}, 1)
	return nil
}

// startRound begins round; its seeds are queued by runRound.
func (r *jobRunner) startRound(ctx context.Context, round int64) error {
	started, err := r.frontier.startRound(ctx, round)
	if err != nil {
		return err
	}
	if started {
		r.m.bumpJobs(ctx)
		r.log.Info("round started", zap.Int64("round", round), zap.Int("seeds", r.spec.SeedCount))
	}
	return nil
}

// runRound fetches list pages until the round is finished, the job is
// cancelled or paused, or ctx ends.
func (r *jobRunner) runRound(ctx context.Context, round int64) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.pausing.Store(false)
	r.abandon, r.stopTaking = context.WithCancel(context.Background())
	defer r.stopTaking()
	g, gctx := errgroup.WithContext(rctx)
	r.sayRenderers()
	g.Go(func() error { r.checkListRenderer(gctx); return nil })
	g.Go(func() error { return r.seed(gctx, round) })
	g.Go(func() error { return r.feed(gctx, round) })
	g.Go(func() error { return r.drainFound(gctx, round) })
	g.Go(func() error {
		defer cancel()
		return r.maintain(gctx, round)
	})
	err := g.Wait()
	if errors.Is(err, errCancel) || errors.Is(err, errPaused) {
		return nil // the run loop reads the request and cancels the job, or waits for resume
	}
	return err
}

// errCancel stops a round that client cancel asked to stop.
var errCancel = errors.New("job cancelled")

// cancelDrain bounds how long a cancel waits for the job's list pages in
// progress, so none admits links after the job is finished.
const cancelDrain = 30 * time.Second

// cancel stops the job as client cancel asked. Its queued tasks are dropped
// at once, so slaves stop. Then, every finishCheckEvery, what the list
// pages in progress queued meanwhile and the tasks whose lease lapsed are
// dropped too, until none of its list pages is in progress here (or
// cancelDrain passed) and none of its tasks is in flight: only then is the
// job finished. Tasks in flight under a live lease are left to their
// slaves, which acknowledge them as usual. Every dropped task is counted
// as cancelled, so the counters add up once the job is finished.
func (r *jobRunner) cancel(ctx context.Context) error {
	dropped, _, err := r.frontier.cancel(ctx, false)
	if err != nil {
		return err
	}
	drainBy := time.Now().Add(cancelDrain)
	for {
		n, finished, err := r.frontier.cancel(ctx, r.inProgressCount() == 0 || time.Now().After(drainBy))
		switch {
		case errors.Is(err, errFenced):
			return err
		case err != nil:
			r.warn(ctx, "cancel job", zap.Error(err))
		case finished:
			r.dropFound(ctx)
			r.m.bumpJobs(ctx)
			r.log.Info("job cancelled", zap.Int64("tasks_dropped", dropped+n))
			return nil
		}
		dropped += n
		if !sleep(ctx, finishCheckEvery) {
			return nil
		}
	}
}

// seed queues the round's seeds onto the frontier, a batch per call, so a
// job of a million seeds never holds Redis for long.
func (r *jobRunner) seed(ctx context.Context, round int64) error {
	for ctx.Err() == nil {
		left, err := r.frontier.seed(ctx, round)
		if err == nil {
			r.nudge() // the feeder may have found the frontier empty: the walk starts now, not at its next look
		}
		switch {
		case errors.Is(err, errFenced):
			return err
		case err != nil:
			r.warn(ctx, "queue seeds", zap.Error(err))
			sleep(ctx, r.m.opts.Tick)
		case left == 0, left == seedOtherRound:
			return nil
		}
	}
	return nil
}

// finishCheckEvery is how often a running round checks whether it is
// done: one cheap script call, so the end of a crawl is noticed quickly.
const finishCheckEvery = 100 * time.Millisecond

// maintain reclaims lapsed leases (every tick), prepares the dupefilter's
// next slice and ends the round once nothing is left to do.
func (r *jobRunner) maintain(ctx context.Context, round int64) error {
	ticker := time.NewTicker(finishCheckEvery)
	defer ticker.Stop()
	var lastReclaim time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		if time.Since(lastReclaim) >= r.m.opts.Tick {
			r.syncClock(ctx)
			r.prepareFilter(ctx)
			r.checkBudget(ctx, round)
			r.reclaim(ctx)
			lastReclaim = time.Now()
		}
		outcome, err := r.frontier.tryFinish(ctx, r.nextRoundAt())
		if errors.Is(err, errFenced) {
			return err
		}
		if err != nil {
			r.warn(ctx, "check finished", zap.Error(err))
			continue
		}
		switch outcome {
		case ledger.RoundFinished:
			r.m.bumpJobs(ctx)
			r.log.Info("round finished", zap.Int64("round", round))
			return nil
		case ledger.RoundCancel:
			return errCancel
		case ledger.RoundPaused:
			return r.pause(ctx)
		}
	}
}

// syncClock reads the cluster's clock, which the next round's time is
// taken from when the round finishes.
func (r *jobRunner) syncClock(ctx context.Context) {
	if _, err := r.m.clock.sync(ctx); err != nil {
		r.warn(ctx, "sync clock", zap.Error(err))
	}
}

func (r *jobRunner) prepareFilter(ctx context.Context) {
	if err := r.filter.Prepare(ctx); err != nil {
		r.warn(ctx, "prepare dupefilter slice", zap.Error(err))
	}
}

// nextRoundAt is when the next round starts (recrawl_every or schedule,
// from now on the cluster's clock), or zero when the job runs once.
func (r *jobRunner) nextRoundAt() time.Time {
	return r.spec.NextRound(r.m.clock.now())
}

// roundDue reads the cluster's clock and reports whether the round
// scheduled at next is due. A clock that cannot be read says not yet: the
// runner asks again a tick later.
func (r *jobRunner) roundDue(ctx context.Context, next time.Time) bool {
	now, err := r.m.clock.sync(ctx)
	if err != nil {
		r.warn(ctx, "wait for the next round", zap.Error(err))
		return false
	}
	return !now.Before(next)
}

// untilRound is how long to wait before looking again for the round
// scheduled at next: until it is due by the clock last read, but a tick
// at most, so a clock that moves (a server's stepped, or a test's) is
// read again soon, and finishCheckEvery at least, so a clock that could
// not be read is not asked again at once.
func (r *jobRunner) untilRound(next time.Time) time.Duration {
	return min(max(next.Sub(r.m.clock.now()), finishCheckEvery), r.m.opts.Tick)
}

// reclaim puts list pages and detail tasks whose lease lapsed back on their
// lists, and moves the tasks of dead slaves to live ones.
func (r *jobRunner) reclaim(ctx context.Context) {
	r.releaseOrphanPages(ctx)
	r.releaseOrphanFound(ctx)
	r.reclaimFound(ctx)
	depth, err := r.readDepth(ctx)
	if err != nil {
		r.warn(ctx, "read queue depths", zap.Error(err))
		return
	}
	r.m.deps.Metrics.Queues().Set(r.name, depth.Queued, depth.Inflight)
	r.rerouteDead(ctx, depth)
	r.rebalance(ctx, depth)
	r.routeRetries(ctx)
	r.routeRenderWaiting(ctx, depth)
	for slave, inflight := range depth.Inflight {
		if inflight == 0 {
			continue
		}
		n, err := r.queues.Slave(slave).Reclaim(ctx)
		if err != nil {
			r.warn(ctx, "reclaim tasks", zap.Int("slave", slave), zap.Error(err))
		} else if n > 0 {
			r.log.Info("tasks redelivered after lease", zap.Int("slave", slave), zap.Int("tasks", n))
		}
	}
}

// releaseOrphanPages puts back on the frontier the list pages in progress
// that none of this runner's workers is processing: one whose commit
// failed (Redis was away), or one left by an earlier owner (the first pass
// runs as the round starts, so a master taking a job over resumes at once).
// This master owns the job alone (its fence guards every commit), so such
// a page is nobody's: a stale owner still fetching it cannot commit it, and
// its admission, if it got that far, makes this one's a no-op. A page
// taken in the last second is left alone, as its worker may not have
// recorded it yet.
func (r *jobRunner) releaseOrphanPages(ctx context.Context) {
	r.releaseOrphans(ctx, r.lists, r.inProgress, "list pages")
}

// releaseOrphanFound puts back the Found entries in progress that this
// runner's drain is not routing, as releaseOrphanPages does list pages:
// those of an earlier owner are routed at once, not after their lease of
// ListLease (minutes), and one whose commit failed is tried again at the
// next tick, its deliveries counted.
func (r *jobRunner) releaseOrphanFound(ctx context.Context) {
	r.releaseOrphans(ctx, r.found, r.foundHeld, "found links")
}

// releaseOrphans requeues the entries of l taken over a second ago that
// held (read under r.mu) does not name.
func (r *jobRunner) releaseOrphans(ctx context.Context, l *queue.Leased, held map[string]bool, what string) {
	r.mu.Lock()
	known := len(held)
	r.mu.Unlock()
	expiring, err := l.Orphans(ctx, known, r.m.opts.ListLease-time.Second)
	if err != nil {
		r.warn(ctx, "read "+what+" in progress", zap.Error(err))
		return
	}
	r.mu.Lock()
	var orphans []string
	for _, p := range expiring {
		if !held[p] {
			orphans = append(orphans, p)
		}
	}
	r.mu.Unlock()
	if n, err := l.Requeue(ctx, orphans); err != nil {
		r.warn(ctx, "put orphaned "+what+" back", zap.Error(err))
	} else if n > 0 {
		r.log.Info("put orphaned "+what+" back", zap.Int("entries", n))
	}
}

// fenced returns errFenced once a commit found the job taken over.
func (r *jobRunner) fenced() error {
	if r.lost.Load() {
		return errFenced
	}
	return nil
}

// inProgressCount is how many of the job's list pages this runner holds.
func (r *jobRunner) inProgressCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.inProgress)
}

// working records that a worker processes list page p, until done is called.
func (r *jobRunner) working(p string) (done func()) {
	r.mu.Lock()
	r.inProgress[p] = true
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.inProgress, p)
		r.mu.Unlock()
		r.nudge()
	}
}

// nudge wakes the feeder: a list page is done with, or queued the next
// pages of the walk.
func (r *jobRunner) nudge() {
	select {
	case r.pageDone <- struct{}{}:
	default:
	}
}

// sleep waits d or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	return ctxtime.Sleep(ctx, d) == nil
}

// warn logs a warning unless ctx ended: a Redis call cut short by the
// job's own stop (a cancel, a shutdown, a lost lease) is no news, and
// "context canceled" in a user's log reads as a fault.
func (r *jobRunner) warn(ctx context.Context, msg string, fields ...zap.Field) {
	if ctx.Err() == nil {
		r.log.Warn(msg, fields...)
	}
}
