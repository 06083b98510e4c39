package master

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/internal/wake"
	"github.com/crawler-dev/crawler/membership"
	"github.com/crawler-dev/crawler/metrics"
)

// Master coordinates the crawl of every job it owns.
type Master struct {
	opts      Options
	token     string // this process's identity in job leases: ID plus a random suffix
	deps      Deps
	log       *zap.Logger
	dl        *downloader.Downloader // fetches list pages, politely, for every job
	assigner  *assign.Assigner
	registry  *membership.Registry
	clock     *serverClock                    // Redis's TIME, on which rounds are scheduled
	routes    atomic.Pointer[assign.Snapshot] // the live slave table prepared for routing, kept by Watch
	renderers atomic.Pointer[assign.Snapshot] // the part of it that can render (render.go)
	watchWake chan struct{}                   // wakes Watch to read the table now (buffered, 1)
	jobsWake  chan struct{}                   // wakes coordinate to look at the jobs now (buffered, 1)

	mu   sync.Mutex
	jobs map[string]*ownedJob
	// seen is each job's state as this master's runners last read it, kept
	// across runners (a lease lost and taken again), so a change is told
	// once (stateChanged). It holds a short string per job this master
	// ever ran.
	seen map[string]string
	wg   sync.WaitGroup

	lastScan    time.Time // when the jobs were last scanned
	jobsVersion string    // the jobs' version seen then
}

// idleScan is how often a master that owns no job scans the jobs when
// their version does not change: a crashed master's job is taken over
// within it.
const idleScan = 5 * time.Second

// idleWatch is how often a master that owns no job looks at the live slave
// table.
const idleWatch = 5 * time.Second

// scanDue reports whether the jobs must be scanned now: every tick while
// the master owns a job (its lease must be renewed), at once when the jobs'
// version changed (a submission, a round started or finished), and every
// idleScan otherwise. Idle, a master costs Redis a GET per tick.
func (m *Master) scanDue(ctx context.Context) bool {
	if m.owning() || time.Since(m.lastScan) >= idleScan {
		m.lastScan = time.Now()
		return true
	}
	v, err := m.deps.Redis.Get(ctx, m.deps.Keys.JobsVersion()).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return true
	}
	if v == m.jobsVersion {
		return false
	}
	m.jobsVersion, m.lastScan = v, time.Now()
	return true
}

// owning reports whether the master runs any job.
func (m *Master) owning() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.jobs) > 0
}

// watchEvery is how often the live slave table is read: every tick while
// the master runs jobs (a dead slave's tasks must move soon), every
// idleWatch otherwise.
func (m *Master) watchEvery() time.Duration {
	if m.owning() {
		return m.opts.Tick
	}
	return max(m.opts.Tick, idleWatch)
}

// bumpJobs tells idle processes that a job changed state.
func (m *Master) bumpJobs(ctx context.Context) {
	if err := m.deps.Redis.Incr(ctx, m.deps.Keys.JobsVersion()).Err(); err != nil {
		m.log.Warn("bump the jobs' version", zap.Error(err))
	}
}

// wakeSlaves tells the slaves given new tasks of job, in one round trip,
// so that an idle one takes them at once (cluster.Keys.TasksChannel). The
// message is the job's name: a slave that runs it already need not read
// the jobs again. It is best effort: a slave not told takes them at its
// next poll.
func (m *Master) wakeSlaves(ctx context.Context, job string, slaves map[int]bool) {
	if len(slaves) == 0 {
		return
	}
	pipe := m.deps.Redis.Pipeline()
	for id := range slaves {
		pipe.Publish(ctx, m.deps.Keys.TasksChannel(id), job)
	}
	if _, err := pipe.Exec(ctx); err != nil && ctx.Err() == nil {
		m.log.Debug("wake slaves", zap.Error(err))
	}
}

// ownedJob is a job this master holds the lease of, and its runner.
type ownedJob struct {
	fence  int64
	cancel context.CancelFunc
	done   chan struct{}
}

// New validates opts and returns a Master ready to Run.
func New(opts Options, deps Deps) (*Master, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	if err := deps.validate(); err != nil {
		return nil, err
	}
	log := deps.Logger
	if log == nil {
		log = zap.NewNop()
	}
	assigner, err := assign.New(assign.Options{Slots: opts.MaxSlaves, Mode: assign.Mode(opts.AssignMode), MaxWeight: opts.MaxWeight})
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	registry, err := membership.New(deps.Redis, deps.Keys, membership.Options{MaxSlaves: opts.MaxSlaves, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	log = log.Named("master").With(zap.String("master", opts.ID))
	dlOpts := opts.Download
	dlOpts.Workers = opts.ListConcurrency
	opts.Fetch.MemoryBudget = opts.MaxMemory / 2
	dl, err := downloader.New(dlOpts, downloader.Deps{Redis: deps.Redis, Keys: deps.Keys,
		Fetcher: fetch.New(opts.Fetch), Renderer: deps.Renderer, Metrics: deps.Metrics.Node(metrics.RoleMaster, 0), Logger: log})
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	return &Master{
		opts:      opts,
		clock:     &serverClock{rdb: deps.Redis},
		token:     processToken(opts.ID),
		deps:      deps,
		log:       log,
		dl:        dl,
		assigner:  assigner,
		registry:  registry,
		jobs:      map[string]*ownedJob{},
		seen:      map[string]string{},
		watchWake: make(chan struct{}, 1),
		jobsWake:  make(chan struct{}, 1),
	}, nil
}

// Run coordinates jobs until ctx is cancelled, then releases its job leases.
// It first checks that its routing settings match the cluster's. Redis
// errors are logged and retried on the next tick; they do not stop it.
func (m *Master) Run(ctx context.Context) error {
	if err := m.agreeOnConfig(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		return fmt.Errorf("master: %w", err)
	}
	m.log.Info("master started", zap.Int("max_slaves", m.opts.MaxSlaves), zap.String("assign", m.opts.AssignMode))
	watchCtx, stopWatch := context.WithCancel(ctx)
	watch := &watchJoin{ch: make(chan error, 1)}
	go func() { watch.ch <- m.registry.WatchEvery(watchCtx, m.watchEvery, m.watchWake, m.useTable) }()
	listenDone := make(chan struct{})
	go func() { defer close(listenDone); m.listenJobs(watchCtx) }()
	dlCtx, stopDownloads := context.WithCancel(context.WithoutCancel(ctx))
	dlDone := make(chan struct{})
	go func() { defer close(dlDone); _ = m.dl.Run(dlCtx) }()
	err := m.coordinate(ctx, watch)
	stopWatch()
	if err == nil {
		err = watch.wait() // Watch returns nil once its context ends
	}
	<-listenDone
	m.stopAll()
	stopDownloads()
	<-dlDone
	m.log.Info("master stopped")
	if err != nil {
		return fmt.Errorf("master: %w", err)
	}
	return nil
}

// watchJoin is the end of the membership watch's goroutine. Its one
// result is received exactly once, by whoever gets to it first (the
// coordinator, or Run joining the watch), and remembered for the other.
type watchJoin struct {
	ch   chan error // receives the watch's result, once
	done bool       // the result was received
	err  error      // and was this
}

// received records the watch's result, taken from ch.
func (w *watchJoin) received(err error) error {
	w.done, w.err = true, err
	return err
}

// wait returns the watch's result, waiting for it if it is not in yet.
func (w *watchJoin) wait() error {
	if w.done {
		return w.err
	}
	return w.received(<-w.ch)
}

// coordinate scans the jobs every tick until ctx ends (nil) or the
// membership watch ends: with its error when the cluster's max_slaves
// differs, with nil when ctx ended as a scan ran.
func (m *Master) coordinate(ctx context.Context, watch *watchJoin) error {
	ticker := time.NewTicker(m.opts.Tick)
	defer ticker.Stop()
	for {
		if m.scanDue(ctx) {
			m.scanJobs(ctx)
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-watch.ch:
			return watch.received(err)
		case <-ticker.C:
		case <-m.jobsWake:
		}
	}
}

// listenJobs wakes the coordinator whenever a job is said to have changed
// (cluster.Keys.JobsChannel), until ctx ends: a submitted job is taken up
// at once instead of at the next tick. go-redis resubscribes after a
// dropped connection; a message missed meanwhile costs one tick.
func (m *Master) listenJobs(ctx context.Context) {
	wake.Listen(ctx, m.deps.Redis, m.deps.Keys.JobsChannel(), func(string) {
		select {
		case m.jobsWake <- struct{}{}:
		default:
		}
	})
}

// useTable prepares a new version of the live slave table for routing;
// membership's Watch calls it whenever the version changes.
func (m *Master) useTable(t assign.Table) {
	snap, err := m.assigner.Snapshot(t)
	if err != nil {
		m.log.Error("unusable live slave table", zap.Error(err))
		return
	}
	renderers, err := m.assigner.Snapshot(t.Renderers())
	if err != nil {
		m.log.Error("unusable live slave table", zap.Error(err))
		return
	}
	m.log.Info("live slaves", zap.Int64("version", t.Version), zap.Ints("slaves", nodeIDs(t)),
		zap.Ints("renderers", nodeIDs(t.Renderers())))
	m.renderers.Store(renderers)
	m.routes.Store(snap)
}

// nodeIDs lists the IDs of t's nodes.
func nodeIDs(t assign.Table) []int {
	ids := make([]int, len(t.Nodes))
	for i, n := range t.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// liveRoutes returns the live slave table prepared for routing, or nil if
// no slave is live.
func (m *Master) liveRoutes() *assign.Snapshot {
	s := m.routes.Load()
	if s == nil || s.Len() == 0 {
		return nil
	}
	return s
}

// scanJobs renews the leases of owned jobs and takes over jobs with work
// that nobody owns. The states of all jobs are read in one round trip.
func (m *Master) scanJobs(ctx context.Context) {
	names, err := m.deps.Redis.ZRange(ctx, m.deps.Keys.Jobs(), 0, -1).Result()
	if err == nil {
		var idle []bool
		idle, err = m.jobsIdle(ctx, names)
		for i, name := range names {
			if err != nil {
				break
			}
			if err := m.tendJob(ctx, name, idle[i]); err != nil && ctx.Err() == nil {
				m.log.Warn("tend job", zap.String("job", name), zap.Error(err))
			}
		}
	}
	if err != nil && ctx.Err() == nil {
		m.log.Warn("list jobs", zap.Error(err))
	}
}

func (m *Master) tendJob(ctx context.Context, name string, idle bool) error {
	jk := m.deps.Keys.Job(name)
	m.mu.Lock()
	owned := m.jobs[name]
	m.mu.Unlock()
	if owned != nil {
		return m.renewJob(ctx, name, jk, owned)
	}
	if idle {
		return nil
	}
	fence, err := acquireScript.Run(ctx, m.deps.Redis, []string{jk.Owner(), jk.Fence()},
		m.token, m.opts.JobLease.Milliseconds()).Int64()
	if err != nil {
		return fmt.Errorf("acquire job lease: %w", err)
	}
	if fence == leaseHeld {
		return nil // another master owns it
	}
	m.startJob(ctx, name, fence)
	return nil
}

// jobsIdle reports for each job whether it has nothing to do: finished,
// with no round scheduled after, or indexed by a submission that has not
// written it yet.
func (m *Master) jobsIdle(ctx context.Context, names []string) ([]bool, error) {
	pipe := m.deps.Redis.Pipeline()
	cmds := make([]*redis.SliceCmd, len(names))
	for i, name := range names {
		cmds[i] = pipe.HMGet(ctx, m.deps.Keys.Job(name).State(), cluster.StateField, cluster.StateNextRoundAt)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("read job states: %w", err)
	}
	idle := make([]bool, len(names))
	for i, c := range cmds {
		vals := c.Val()
		state, _ := vals[0].(string)
		next, _ := vals[1].(string)
		idle[i] = state == "" || (state == cluster.StateFinished && next == "")
	}
	return idle, nil
}

func (m *Master) renewJob(ctx context.Context, name string, jk cluster.JobKeys, owned *ownedJob) error {
	select {
	case <-owned.done: // the runner ended: the job is finished
		m.forget(name, owned)
		return m.release(ctx, jk)
	default:
	}
	ok, err := renewScript.Run(ctx, m.deps.Redis, []string{jk.Owner()}, m.token, m.opts.JobLease.Milliseconds()).Bool()
	if err != nil {
		return fmt.Errorf("renew job lease: %w", err)
	}
	if !ok {
		m.log.Warn("lost job lease", zap.String("job", name))
		owned.cancel()
		m.forget(name, owned)
	}
	return nil
}

func (m *Master) startJob(ctx context.Context, name string, fence int64) {
	jctx, cancel := context.WithCancel(ctx)
	owned := &ownedJob{fence: fence, cancel: cancel, done: make(chan struct{})}
	m.mu.Lock()
	m.jobs[name] = owned
	m.mu.Unlock()
	select { // route the job on a fresh live slave table, not an idle one
	case m.watchWake <- struct{}{}:
	default:
	}
	log := m.log.With(zap.String("job", name))
	log.Info("job acquired", zap.Int64("fence", fence))
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(owned.done)
		defer m.deps.Metrics.Queues().Forget(name)
		defer m.deps.Metrics.JobStates().Forget(name)
		r := &jobRunner{m: m, name: name, keys: m.deps.Keys.Job(name), fence: fence, log: log}
		if err := r.run(jctx); err != nil && jctx.Err() == nil {
			log.Error("job stopped", zap.Error(err))
		}
	}()
}

func (m *Master) forget(name string, owned *ownedJob) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.jobs[name] == owned {
		delete(m.jobs, name)
	}
}

// stopAll stops every runner and releases the job leases, so another master
// can take over at once.
func (m *Master) stopAll() {
	m.mu.Lock()
	jobs := m.jobs
	m.jobs = map[string]*ownedJob{}
	m.mu.Unlock()
	for _, j := range jobs {
		j.cancel()
	}
	m.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for name := range jobs {
		_ = m.release(ctx, m.deps.Keys.Job(name))
	}
}

func (m *Master) release(ctx context.Context, jk cluster.JobKeys) error {
	if err := releaseScript.Run(ctx, m.deps.Redis, []string{jk.Owner()}, m.token).Err(); err != nil {
		return fmt.Errorf("release job lease: %w", err)
	}
	return nil
}

// processToken is a master process's identity in job leases: its ID, which
// operators read, and a random suffix, so a master restarted with the same
// --id while its old lease lives is a new owner with a new fencing token,
// and the old process, should it still run, can renew nothing.
func processToken(id string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return id + "/" + hex.EncodeToString(b[:])
}
