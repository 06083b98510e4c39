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
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/internal/ctxtime"
	"github.com/crawler-dev/crawler/internal/wake"
	"github.com/crawler-dev/crawler/membership"
	"github.com/crawler-dev/crawler/metrics"
)

// Slave fetches the detail pages routed to its ID.
type Slave struct {
	opts     Options
	deps     Deps
	log      *zap.Logger
	infoMu   sync.Mutex
	info     cluster.NodeInfo // its node record; Render changes (render.go)
	registry *membership.Registry
	dl       *downloader.Downloader
	jobs     *jobSet
	held     *heldTasks
	acks     *acker
	commits  *committer
	marks    *marker
	// fetchTime is how long the pages' fetches took lately (smoothed): it
	// spaces the marks' groups.
	fetchTime ewma
	// keepExchanges is true when a sink archives what went over the wire.
	keepExchanges bool

	side sync.WaitGroup // tasks being fetched or settled without a fetch
	// fetches counts the tasks handed to the downloader whose Fetch has not
	// returned: counted before their goroutine starts, so that a take
	// right after sees them.
	fetches atomic.Int64
	freed   chan struct{} // signalled when a task is done with
	queued  chan struct{} // signalled when a master says tasks were queued here
	told    atomic.Bool   // a master said tasks were queued of a job not seen yet
}

// New validates opts and returns a Slave ready to Run.
func New(opts Options, deps Deps) (*Slave, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("slave: %w", err)
	}
	if err := deps.validate(); err != nil {
		return nil, err
	}
	log := deps.Logger
	if log == nil {
		log = zap.NewNop()
	}
	log = log.Named("slave").With(zap.Int("slave", opts.ID))
	registry, err := membership.New(deps.Redis, deps.Keys, membership.Options{Lease: opts.Lease, MaxSlaves: opts.MaxSlaves, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("slave: %w", err)
	}
	dlOpts := opts.Download
	dlOpts.Workers = opts.Concurrency
	opts.Fetch.MemoryBudget = opts.MaxMemory / 2
	dl, err := downloader.New(dlOpts, downloader.Deps{Redis: deps.Redis, Keys: deps.Keys,
		Fetcher: fetch.New(opts.Fetch), Renderer: deps.Renderer, Metrics: deps.Metrics.Node(metrics.RoleSlave, opts.ID), Logger: log})
	if err != nil {
		return nil, fmt.Errorf("slave: %w", err)
	}
	s := &Slave{
		opts:          opts,
		deps:          deps,
		log:           log,
		info:          nodeInfo(opts),
		registry:      registry,
		dl:            dl,
		keepExchanges: deps.Sinks != nil && deps.Sinks.KeepsExchanges(),
		jobs:          newJobSet(deps.Redis, deps.Keys, opts.ID, opts.PriorityAging, dl, deps.Metrics.Node(metrics.RoleSlave, opts.ID).NearDup(), log),
		held:          newHeldTasks(),
		freed:         make(chan struct{}, 1),
		queued:        make(chan struct{}, 1),
	}
	s.info.Render = renderOffer(deps.Renderer, log)
	s.jobs.onRender = s.jobRenders
	s.acks = newAcker(s, log)
	s.commits = newCommitter(s)
	s.marks = newMarker(s, log)
	return s, nil
}

func nodeInfo(opts Options) cluster.NodeInfo {
	host, _ := os.Hostname()
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	return cluster.NodeInfo{
		ID: opts.ID, Weight: opts.weight(), Host: host, PID: os.Getpid(),
		Concurrency: opts.Concurrency, Token: hex.EncodeToString(tok[:]), StartedAt: time.Now().UTC(),
	}
}

// Register claims the slave's ID in the node table. Run calls it; calling it
// first lets a command report a duplicate ID before doing anything else. A
// registration this slave's previous process left behind (killed on this
// host) is replaced; one of another live process is refused once its lease
// shows it alive (membership.Registry.Claim).
func (s *Slave) Register(ctx context.Context) error {
	if err := s.registry.Claim(ctx, s.nodeInfo()); err != nil {
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
	s.log.Info("slave started", zap.Int("concurrency", s.opts.Concurrency), zap.Float64("weight", s.opts.weight()))

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
		err := s.registry.KeepAlive(ctx, s.nodeInfo())
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, membership.ErrLeaseLost) {
			return err
		}
		s.log.Warn("node lease lapsed; rejoining", zap.Error(err))
	}
}

// work runs the downloader, the dispatcher, the committer, the acker and
// the lease renewer until ctx ends, then drains them in order: no task is
// taken any more; pages being fetched finish (up to DrainTimeout) and are
// committed and acknowledged; what is left is handed back.
func (s *Slave) work(ctx context.Context) {
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
	dlDone := make(chan struct{})
	go func() { defer close(dlDone); _ = s.dl.Run(ctx) }()
	renewDone := make(chan struct{})
	go func() { defer close(renewDone); s.renewLeases(drainCtx) }()
	ackDone := make(chan struct{})
	go func() { defer close(ackDone); s.acks.run(drainCtx) }()
	commitDone := make(chan struct{})
	go func() { defer close(commitDone); s.commits.run(drainCtx) }()
	markDone := make(chan struct{})
	go func() { defer close(markDone); s.marks.run(drainCtx) }()
	wakeDone := make(chan struct{})
	go func() { defer close(wakeDone); s.listen(ctx) }()
	go s.publishLoads(ctx)

	s.dispatch(ctx, drainCtx)
	<-wakeDone
	<-dlDone
	s.side.Wait()
	s.commits.close()
	<-commitDone
	s.acks.close()
	<-ackDone
	cancelDrain()
	<-renewDone
	<-markDone
	s.handBack()
}

// capacity is how many tasks the slave holds for its fetchers: those
// being fetched and those whose turn comes soon. Holding more than it
// fetches lets a slave whose queue mixes a slow host and fast ones keep its
// fetchers busy.
func (s *Slave) capacity() int { return 4 * s.opts.Concurrency }

// room is how many more tasks the slave may take: up to capacity of those
// being fetched or due soon, plus up to MaxParked that wait long (a paused
// host's, a slow host's beyond its cap, a Retry-After's), so that tasks of
// one slow or paused host never fill the room of the others.
//
// Items waiting in the committer past a batch's worth count too: a sink
// or store that does not take them holds them, and the slave then takes
// no more than it can hold instead of fetching on.
func (s *Slave) room() int {
	parked := min(s.dl.Parked(), s.opts.MaxParked, s.pending())
	backlog := max(0, s.commits.held()-commitBatch)
	return s.capacity() - (s.pending() - parked) - backlog
}

// refill is the room the slave waits for before it takes tasks again: a
// quarter of its capacity, so that a take fetches Concurrency tasks or
// more in one call, not one per request that ends, while three quarters
// are still held for the fetchers.
func (s *Slave) refill() int { return max(1, s.capacity()/4) }

// takeSpacing is the least time between two takes that find the queues
// dry, for a slave that holds work (at least a task per fetcher): each
// take of a trickle of admissions would cost a round trip for a task or
// two, and the tasks it holds keep its fetchers busy meanwhile.
const takeSpacing = 250 * time.Millisecond

// dispatch takes tasks from the running jobs' queues while there is room.
func (s *Slave) dispatch(ctx, drainCtx context.Context) {
	lastCheck := time.Time{}
	dry := 0 // takes in a row that found every queue empty
	for ctx.Err() == nil {
		if s.told.Swap(false) || time.Since(lastCheck) >= time.Second {
			if err := s.jobs.refreshIfChanged(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("refresh jobs", zap.Error(err))
			}
			lastCheck = time.Now()
		}
		room := s.room()
		if room < s.refill() {
			s.waitFreed(ctx, s.opts.Poll)
			continue
		}
		took := s.takeTasks(ctx, drainCtx, room)
		if took >= room {
			dry = 0
			continue
		}
		if took > 0 {
			dry = 0
		} else {
			dry++
		}
		// The take drained the queues: nothing is taken again until a
		// master says it queued more (it says so when a queue of this
		// slave's was empty), or after dryPoll in case that word was
		// lost. A slave that holds work (a polite crawl's tasks waiting
		// for their hosts' turns) lets a few of the masters' admissions
		// gather first; one running out takes at the first word of more.
		if s.pending() >= s.opts.Concurrency && ctxtime.Sleep(ctx, takeSpacing) != nil {
			return
		}
		if s.jobs.any(s.mayStealSoon) {
			s.waitFreed(ctx, s.opts.Poll) // it steals once a fetch ends
			continue
		}
		s.waitQueued(ctx, s.dryPoll(dry))
	}
}

// dryPoll is how long the dispatcher waits for word of new tasks after
// dry takes in a row found the queues empty: Options.Poll, doubling with
// each empty take up to five times that. The masters' word (TasksChannel)
// is what wakes a slave; the poll only bounds the wait when that word is
// lost, so a slave with nothing to do costs Redis a take a second, not a
// take per fetch that ends.
func (s *Slave) dryPoll(dry int) time.Duration {
	wait := s.opts.Poll
	for i := 1; i < dry && wait < 5*s.opts.Poll; i++ {
		wait *= 2
	}
	return min(wait, 5*s.opts.Poll)
}

// takeTasks takes up to room tasks, visiting the running jobs in turn, and
// hands them to the downloader.
func (s *Slave) takeTasks(ctx, drainCtx context.Context, room int) int {
	took := 0
	for _, j := range s.jobs.rotation() {
		if took >= room {
			break
		}
		leaseEnd := time.Now().Add(s.opts.TaskLease) // at the latest: Redis starts it on arrival
		ds, err := s.take(ctx, j, room-took)
		j.servedAt.Store(time.Now().UnixNano())
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("take tasks", zap.String("job", j.name), zap.Error(err))
			}
			continue
		}
		works := make([]*work, len(ds))
		for i, d := range ds {
			// Held from the take on, not from the fetch: the store's
			// look-up below can take seconds on a loaded machine, and a
			// task taken but not yet held looks like an orphan to
			// releaseOrphans, which would hand it back to be fetched twice.
			s.held.add(j, d.Entry, leaseEnd)
			task, err := cluster.DecodeTask(d.Entry)
			works[i] = &work{job: j, raw: d.Entry, task: task, undecodable: err, deliveries: d.Count, lastError: d.LastError}
		}
		s.lookUp(ctx, j, works)
		s.lookUpStored(ctx, j, works)
		for _, w := range works {
			s.start(drainCtx, w)
		}
		took += len(ds)
	}
	return took
}

// start hands a held task to the downloader, or settles it at once if it
// cannot be fetched.
func (s *Slave) start(drainCtx context.Context, w *work) {
	task := w.task
	if w.undecodable != nil || s.deadLetter(w) {
		s.side.Add(1)
		go func() {
			defer s.side.Done()
			defer s.signalFreed()
			s.settleUnfetchable(drainCtx, w, w.undecodable)
		}()
		return
	}
	if w.visit.notDue && !w.storedEarlier {
		s.settleNotDue(w)
		s.signalFreed()
		return
	}
	if w.job.renderKinds[task.ItemKind()] && !s.canRender() {
		s.side.Add(1)
		go func() {
			defer s.side.Done()
			defer s.signalFreed()
			s.park(drainCtx, w)
		}()
		return
	}
	req := &downloader.Request{Abandon: w.job.stopped, URL: task.URL, Job: w.job.dl,
		Validators: w.validators(), Started: func() { s.marks.started(w) }, KeepExchange: s.keepExchanges,
		Kind: task.ItemKind(), AllowNonHTML: w.job.jsonKind(task.ItemKind())}
	s.side.Add(1)
	s.fetches.Add(1)
	go func() {
		defer s.side.Done()
		defer s.signalFreed()
		res := s.dl.Fetch(drainCtx, req)
		s.fetches.Add(-1)
		s.handle(drainCtx, w, res)
	}()
}

// pending is how many tasks are with the downloader: waiting for their
// turn or being fetched.
func (s *Slave) pending() int { return int(s.fetches.Load()) }

// listen wakes the dispatcher whenever a master says tasks were queued for
// this slave (cluster.Keys.TasksChannel), until ctx ends: an idle slave
// then takes them at once instead of at its next poll.
func (s *Slave) listen(ctx context.Context) {
	wake.Listen(ctx, s.deps.Redis, s.deps.Keys.TasksChannel(s.opts.ID), func(job string) {
		if !s.jobs.has(job) { // a job not seen yet, or an older master's "1"
			s.told.Store(true)
		}
		select {
		case s.queued <- struct{}{}:
		default:
		}
	})
}

func (s *Slave) signalFreed() {
	select {
	case s.freed <- struct{}{}:
	default:
	}
}

// waitFreed waits until a task is done with, or d has passed, or ctx ends.
func (s *Slave) waitFreed(ctx context.Context, d time.Duration) { s.waitFor(ctx, s.freed, d) }

// waitQueued waits until a master says tasks were queued for this slave,
// or d has passed, or ctx ends.
func (s *Slave) waitQueued(ctx context.Context, d time.Duration) { s.waitFor(ctx, s.queued, d) }

func (s *Slave) waitFor(ctx context.Context, signal <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-signal:
	case <-t.C:
	}
}

// renewLeases keeps the leases of held tasks alive, and hands back the
// orphans it finds on the way. A lease is renewed only when it would end
// within renewAhead ticks: most tasks are done well inside one lease, and
// renewing every held task at every tick cost Redis by the task-second
// (a slave holds hundreds of tasks waiting for their hosts' turns).
func (s *Slave) renewLeases(ctx context.Context) {
	every := min(s.opts.TaskLease/3, 5*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.renewEnding(ctx, time.Now().Add(renewAhead*every))
		s.releaseOrphans(ctx, s.held.snapshot())
	}
}

// renewAhead is how many renewal ticks before its end a held task's lease
// is renewed: a renewal that fails is tried again at the next ones.
const renewAhead = 3

// renewEnding renews the leases of held tasks that end before by.
func (s *Slave) renewEnding(ctx context.Context, by time.Time) {
	for j, raws := range s.held.endingBy(by) {
		leaseEnd := time.Now().Add(s.opts.TaskLease)
		if err := j.queue.Renew(ctx, raws, s.opts.TaskLease); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("renew task leases", zap.String("job", j.name), zap.Error(err))
			}
			continue
		}
		s.held.renewed(j, raws, leaseEnd)
	}
}

// releaseOrphans hands back the tasks in this slave's in-flight sets that
// it does not hold: a take whose reply was lost (Redis went away mid-call)
// or a run of this slave that died. Redis looks only when a set holds
// more entries than the slave holds of that job, so a slave with no
// orphans pays one ZCARD a job; a task taken within the last second is
// left alone (its take may not have been recorded yet). Without this an
// orphan would wait out its lease.
func (s *Slave) releaseOrphans(ctx context.Context, held map[*job][]string) {
	for _, j := range s.jobs.rotation() {
		candidates, err := j.queue.Orphans(ctx, len(held[j]), s.opts.TaskLease-time.Second)
		if err != nil || len(candidates) == 0 {
			continue
		}
		mine := map[string]bool{}
		for _, raw := range held[j] {
			mine[raw] = true
		}
		var orphans []string
		for _, raw := range candidates {
			if !mine[raw] {
				orphans = append(orphans, raw)
			}
		}
		if n, err := j.queue.Requeue(ctx, orphans); err == nil && n > 0 {
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
