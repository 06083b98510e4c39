package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/queue"
)

// jobRunner drives one owned job through its rounds.
type jobRunner struct {
	m        *Master
	name     string
	keys     cluster.JobKeys
	fence    int64 // the fencing token of this master's lease on the job
	log      *zap.Logger
	spec     *cluster.JobSpec
	filter   *dedup.Filter
	frontier *frontier
	queues   *queue.Queue
	lists    *queue.Leased // the frontier as a leased list

	mu         sync.Mutex
	inProgress map[string]bool // list pages this runner's workers are processing
}

func (r *jobRunner) run(ctx context.Context) error {
	if err := r.load(ctx); err != nil {
		return err
	}
	for {
		state, round, next, err := r.frontier.state(ctx)
		if err != nil {
			r.log.Warn("read job state", zap.Error(err))
			if !sleep(ctx, r.m.opts.Tick) {
				return nil
			}
			continue
		}
		switch {
		case state == cluster.StateRunning:
			if err := r.runRound(ctx, round); err != nil {
				return err
			}
		case state == cluster.StateFinished && r.spec.RecrawlEvery == 0:
			return nil
		case state == cluster.StateFinished && time.Now().Before(next):
			if !sleep(ctx, min(time.Until(next), r.m.opts.Tick)) {
				return nil
			}
		default: // pending, or a recrawl is due
			if err := r.startRound(ctx, round+1); err != nil {
				if errors.Is(err, errFenced) {
					return err
				}
				r.log.Warn("start round", zap.Error(err))
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
	var spec cluster.JobSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("decode job spec: %w", err)
	}
	filter, err := dedup.New(r.m.deps.Redis, dedupOptions(&spec, r.keys))
	if err != nil {
		return fmt.Errorf("job %s: %w", r.name, err)
	}
	r.spec, r.filter = &spec, filter
	r.frontier = &frontier{rdb: r.m.deps.Redis, keys: r.keys, maxSlaves: r.m.opts.MaxSlaves, fence: r.fence}
	r.queues = queue.New(r.m.deps.Redis, r.keys)
	r.lists = queue.NewLeased(r.m.deps.Redis, r.keys.Frontier(), r.keys.FrontierActive())
	r.inProgress = map[string]bool{}
	return nil
}

func dedupOptions(spec *cluster.JobSpec, keys cluster.JobKeys) dedup.Options {
	return dedup.Options{
		Mode:        dedup.Mode(spec.Dedup.Mode),
		Namespace:   keys.Dedup(),
		Window:      spec.Dedup.Window.Std(),
		Granularity: spec.Dedup.Granularity.Std(),
		Capacity:    spec.Dedup.Capacity,
		ErrorRate:   spec.Dedup.ErrorRate,
	}
}

// startRound puts the seeds on the frontier for round.
func (r *jobRunner) startRound(ctx context.Context, round int64) error {
	seeds := make([]pageRef, 0, len(r.spec.Seeds))
	for _, s := range r.spec.Seeds {
		fp, canon, err := dedup.URLFingerprint(s)
		if err != nil {
			return fmt.Errorf("seed %q: %w", s, err)
		}
		seeds = append(seeds, pageRef{fp: fp.String(), page: cluster.ListPage{URL: canon}})
	}
	started, err := r.frontier.startRound(ctx, round, seeds)
	if err != nil {
		return err
	}
	if started {
		r.log.Info("round started", zap.Int64("round", round), zap.Int("seeds", len(seeds)))
	}
	return nil
}

// runRound fetches list pages until the round is finished or ctx ends.
func (r *jobRunner) runRound(ctx context.Context, round int64) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(rctx)
	for i := 0; i < r.m.opts.ListConcurrency; i++ {
		g.Go(func() error { return r.listWorker(gctx, round) })
	}
	g.Go(func() error {
		defer cancel()
		return r.maintain(gctx, round)
	})
	return g.Wait()
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
			r.prepareFilter(ctx)
			r.reclaim(ctx)
			lastReclaim = time.Now()
		}
		finished, err := r.frontier.tryFinish(ctx, r.nextRoundAt())
		if errors.Is(err, errFenced) {
			return err
		}
		if err != nil {
			r.log.Warn("check finished", zap.Error(err))
			continue
		}
		if finished {
			r.log.Info("round finished", zap.Int64("round", round))
			return nil
		}
	}
}

func (r *jobRunner) prepareFilter(ctx context.Context) {
	if err := r.filter.Prepare(ctx); err != nil {
		r.log.Warn("prepare dupefilter slice", zap.Error(err))
	}
}

// nextRoundAt is when the next round starts, or zero without recrawl.
func (r *jobRunner) nextRoundAt() time.Time {
	if r.spec.RecrawlEvery == 0 {
		return time.Time{}
	}
	return time.Now().Add(r.spec.RecrawlEvery.Std())
}

// reclaim puts list pages and detail tasks whose lease lapsed back on their
// lists, and moves the tasks of dead slaves to live ones.
func (r *jobRunner) reclaim(ctx context.Context) {
	r.releaseOrphanPages(ctx)
	depth, err := r.queues.Depth(ctx, r.m.opts.MaxSlaves)
	if err != nil {
		r.log.Warn("read queue depths", zap.Error(err))
		return
	}
	r.rerouteDead(ctx, depth)
	r.routeRetries(ctx)
	for slave, inflight := range depth.Inflight {
		if inflight == 0 {
			continue
		}
		n, err := r.queues.Slave(slave).Reclaim(ctx)
		if err != nil {
			r.log.Warn("reclaim tasks", zap.Int("slave", slave), zap.Error(err))
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
	expiring, err := r.lists.Expiring(ctx, r.m.opts.ListLease-time.Second)
	if err != nil {
		r.log.Warn("read list pages in progress", zap.Error(err))
		return
	}
	r.mu.Lock()
	var orphans []string
	for _, p := range expiring {
		if !r.inProgress[p] {
			orphans = append(orphans, p)
		}
	}
	r.mu.Unlock()
	if n, err := r.lists.Release(ctx, orphans); err != nil {
		r.log.Warn("put orphaned list pages back", zap.Error(err))
	} else if n > 0 {
		r.log.Info("put orphaned list pages back on the frontier", zap.Int("pages", n))
	}
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
	}
}

// sleep waits d or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
