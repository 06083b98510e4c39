package slave

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/membership"
)

// Slave fetches the detail pages routed to its ID.
type Slave struct {
	opts     Options
	deps     Deps
	log      *zap.Logger
	info     cluster.NodeInfo
	registry *membership.Registry
	fetcher  *fetch.Fetcher
	jobs     *jobSet
	held     *heldTasks

	busy  atomic.Int64  // tasks taken and not yet finished
	freed chan struct{} // signalled when a worker finishes a task
}

// work is one task handed to a worker.
type work struct {
	job *job
	raw string
}

// New validates opts and returns a Slave ready to Run.
func New(opts Options, deps Deps) (*Slave, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("slave: %w", err)
	}
	if err := deps.validate(); err != nil {
		return nil, err
	}
	opts.applyDefaults()
	log := deps.Logger
	if log == nil {
		log = zap.NewNop()
	}
	registry, err := membership.New(deps.Redis, deps.Keys, membership.Options{Lease: opts.Lease, MaxSlaves: opts.MaxSlaves})
	if err != nil {
		return nil, fmt.Errorf("slave: %w", err)
	}
	return &Slave{
		opts:     opts,
		deps:     deps,
		log:      log.Named("slave").With(zap.Int("slave", opts.ID)),
		info:     nodeInfo(opts),
		registry: registry,
		fetcher:  fetch.New(opts.Fetch),
		jobs:     newJobSet(deps.Redis, deps.Keys, opts.ID),
		held:     newHeldTasks(),
		freed:    make(chan struct{}, 1),
	}, nil
}

func nodeInfo(opts Options) cluster.NodeInfo {
	host, _ := os.Hostname()
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	return cluster.NodeInfo{
		ID: opts.ID, Weight: opts.Weight, Host: host, PID: os.Getpid(),
		Concurrency: opts.Concurrency, Token: hex.EncodeToString(tok[:]), StartedAt: time.Now().UTC(),
	}
}

// Register claims the slave's ID in the node table. Run calls it; calling it
// first lets a command report a duplicate ID before doing anything else.
func (s *Slave) Register(ctx context.Context) error {
	if err := s.registry.Register(ctx, s.info); err != nil {
		return fmt.Errorf("slave %d: %w", s.opts.ID, err)
	}
	return nil
}

// Run works until ctx is cancelled, then drains: it stops taking tasks,
// finishes what it holds (up to DrainTimeout), hands back the rest and
// deregisters. It returns an error if its ID is taken by another slave.
func (s *Slave) Run(ctx context.Context) error {
	if err := s.Register(ctx); err != nil {
		return err
	}
	s.log.Info("slave started", zap.Int("concurrency", s.opts.Concurrency), zap.Float64("weight", s.opts.Weight))

	// The lease outlives ctx until the drain is over.
	leaseCtx, stopLease := context.WithCancel(context.WithoutCancel(ctx))
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	leaseErr := make(chan error, 1)
	go func() {
		err := s.keepAlive(leaseCtx)
		leaseErr <- err
		if err != nil {
			s.log.Error("node lease lost for good; stopping", zap.Error(err))
			stopRun()
		}
	}()

	s.work(runCtx)
	stopLease()
	s.log.Info("slave stopped")
	if err := <-leaseErr; err != nil {
		return fmt.Errorf("slave %d: %w", s.opts.ID, err)
	}
	return nil
}

// keepAlive holds the slave's place in the node table until ctx ends. A
// lease that lapsed (Redis was away, or the process was frozen) is taken
// again; the master has re-routed the tasks meanwhile, and acknowledgements
// of tasks it no longer holds are not counted. It gives up only when
// another slave holds the ID, or on a configuration mismatch.
func (s *Slave) keepAlive(ctx context.Context) error {
	for {
		err := s.registry.KeepAlive(ctx, s.info)
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, membership.ErrLeaseLost) {
			return err
		}
		s.log.Warn("node lease lapsed; rejoining", zap.Error(err))
	}
}

// work runs the dispatcher, the workers, the acknowledger and the lease
// renewer until ctx ends, then drains them in order.
func (s *Slave) work(ctx context.Context) {
	// Workers get a context that outlives ctx by DrainTimeout.
	drainCtx, cancelDrain := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelDrain()
	go func() {
		<-ctx.Done()
		select {
		case <-time.After(s.opts.DrainTimeout):
			cancelDrain()
		case <-drainCtx.Done():
		}
	}()

	queue := make(chan work, s.opts.Concurrency)
	acks := newAcker(s, s.log)
	var workers sync.WaitGroup
	for i := 0; i < s.opts.Concurrency; i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for w := range queue {
				s.finish(drainCtx, acks, w)
			}
		}()
	}
	renewDone := make(chan struct{})
	go func() { defer close(renewDone); s.renewLeases(drainCtx) }()
	ackDone := make(chan struct{})
	go func() { defer close(ackDone); acks.run(drainCtx) }()

	s.dispatch(ctx, queue)
	close(queue)
	workers.Wait()
	acks.close()
	<-ackDone
	cancelDrain()
	<-renewDone
	s.handBack()
}

// dispatch takes tasks from the running jobs' queues while workers are free.
func (s *Slave) dispatch(ctx context.Context, out chan<- work) {
	lastRefresh := time.Time{}
	for ctx.Err() == nil {
		if time.Since(lastRefresh) >= time.Second {
			if err := s.jobs.refresh(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("refresh jobs", zap.Error(err))
			}
			lastRefresh = time.Now()
		}
		free := s.opts.Concurrency - int(s.busy.Load())
		if free <= 0 {
			s.waitFreed(ctx, s.opts.Poll)
			continue
		}
		if s.takeTasks(ctx, free, out) == 0 {
			s.waitFreed(ctx, s.opts.Poll)
		}
	}
}

// takeTasks takes up to free tasks, visiting the running jobs in turn.
func (s *Slave) takeTasks(ctx context.Context, free int, out chan<- work) int {
	took := 0
	for _, j := range s.jobs.rotation() {
		if took >= free {
			break
		}
		raws, err := j.queue.Take(ctx, free-took, s.opts.TaskLease)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("take tasks", zap.String("job", j.name), zap.Error(err))
			}
			continue
		}
		for _, raw := range raws {
			s.held.add(j, raw)
			s.busy.Add(1)
			out <- work{job: j, raw: raw}
		}
		took += len(raws)
	}
	return took
}

func (s *Slave) waitFreed(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-s.freed:
	case <-t.C:
	}
}

// finish processes one task and queues its acknowledgement. A task it could
// not finish because Redis or the store is away is let go: no longer held,
// it is an orphan that releaseOrphans hands back once Redis answers (or its
// lease lapses). One interrupted by shutdown stays held for handBack.
func (s *Slave) finish(ctx context.Context, acks *acker, w work) {
	defer func() {
		s.busy.Add(-1)
		select {
		case s.freed <- struct{}{}:
		default:
		}
	}()
	outcome, err := s.process(ctx, w)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("task not finished; it will be delivered again", zap.String("job", w.job.name), zap.Error(err))
			s.held.remove(w.job, w.raw)
		}
		return
	}
	acks.add(w.job, outcome)
}

// renewLeases keeps the leases of held tasks alive, and hands back the
// orphans it finds on the way.
func (s *Slave) renewLeases(ctx context.Context) {
	t := time.NewTicker(min(s.opts.TaskLease/3, 5*time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		held := s.held.snapshot()
		for j, raws := range held {
			if err := j.queue.Renew(ctx, raws, s.opts.TaskLease); err != nil && ctx.Err() == nil {
				s.log.Warn("renew task leases", zap.String("job", j.name), zap.Error(err))
			}
		}
		s.releaseOrphans(ctx, held)
	}
}

// releaseOrphans hands back the tasks in this slave's in-flight sets that
// it does not hold: a take whose reply was lost (Redis went away mid-call)
// or a run of this slave that died. Held tasks were just renewed to a full
// lease and new ones taken with one, so a lease ending more than a second
// short of a full one marks an orphan; without this it would wait out its
// lease.
func (s *Slave) releaseOrphans(ctx context.Context, held map[*job][]string) {
	for _, j := range s.jobs.rotation() {
		expiring, err := j.queue.Expiring(ctx, s.opts.TaskLease-time.Second)
		if err != nil || len(expiring) == 0 {
			continue
		}
		mine := map[string]bool{}
		for _, raw := range held[j] {
			mine[raw] = true
		}
		var orphans []string
		for _, raw := range expiring {
			if !mine[raw] {
				orphans = append(orphans, raw)
			}
		}
		if n, err := j.queue.Release(ctx, orphans); err == nil && n > 0 {
			s.log.Info("handed back orphaned tasks", zap.String("job", j.name), zap.Int("tasks", n))
		}
	}
}

// handBack returns every task still held to the head of its queue.
func (s *Slave) handBack() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for j, raws := range s.held.snapshot() {
		n, err := j.queue.Release(ctx, raws)
		if err != nil {
			s.log.Warn("hand back tasks; their lease will lapse", zap.String("job", j.name), zap.Error(err))
			continue
		}
		s.log.Info("handed back unfinished tasks", zap.String("job", j.name), zap.Int("tasks", n))
	}
}

// Close releases nothing Run has not; it exists for symmetry with master.
func (s *Slave) Close() error { return nil }
