package master

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/membership"
)

// Master coordinates the crawl of every job it owns.
type Master struct {
	opts     Options
	deps     Deps
	log      *zap.Logger
	fetcher  *fetch.Fetcher
	assigner *assign.Assigner
	registry *membership.Registry
	routes   atomic.Pointer[assign.Snapshot] // the live slave table prepared for routing, kept by Watch

	mu   sync.Mutex
	jobs map[string]*ownedJob
	wg   sync.WaitGroup
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
	opts.applyDefaults()
	log := deps.Logger
	if log == nil {
		log = zap.NewNop()
	}
	assigner, err := assign.New(assign.Options{Slots: opts.MaxSlaves, Mode: assign.Mode(opts.AssignMode), MaxWeight: opts.MaxWeight})
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	registry, err := membership.New(deps.Redis, deps.Keys, membership.Options{MaxSlaves: opts.MaxSlaves, Logger: log.Named("membership")})
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	return &Master{
		opts:     opts,
		deps:     deps,
		log:      log.Named("master").With(zap.String("master", opts.ID)),
		fetcher:  fetch.New(opts.Fetch),
		assigner: assigner,
		registry: registry,
		jobs:     map[string]*ownedJob{},
	}, nil
}

// Run coordinates jobs until ctx is cancelled, then releases its job leases.
// It first checks that its routing settings match the cluster's. Redis
// errors are logged and retried on the next tick; they do not stop it.
func (m *Master) Run(ctx context.Context) error {
	if err := m.agreeOnConfig(ctx); err != nil {
		return fmt.Errorf("master: %w", err)
	}
	m.log.Info("master started", zap.Int("max_slaves", m.opts.MaxSlaves), zap.String("assign", m.opts.AssignMode))
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watchErr := make(chan error, 1)
	go func() { watchErr <- m.registry.Watch(watchCtx, m.opts.Tick, m.useTable) }()
	ticker := time.NewTicker(m.opts.Tick)
	defer ticker.Stop()
	for {
		m.scanJobs(ctx)
		select {
		case <-ctx.Done():
			m.stopAll()
			m.log.Info("master stopped")
			return nil
		case err := <-watchErr: // the cluster's max_slaves differs from ours
			m.stopAll()
			return fmt.Errorf("master: %w", err)
		case <-ticker.C:
		}
	}
}

// Close releases what Run did not; it is safe to call after Run returns.
func (m *Master) Close() error {
	m.stopAll()
	return nil
}

// useTable prepares a new version of the live slave table for routing;
// membership's Watch calls it whenever the version changes.
func (m *Master) useTable(t assign.Table) {
	snap, err := m.assigner.Snapshot(t)
	if err != nil {
		m.log.Error("unusable live slave table", zap.Error(err))
		return
	}
	ids := make([]int, len(t.Nodes))
	for i, n := range t.Nodes {
		ids[i] = n.ID
	}
	m.log.Info("live slaves", zap.Int64("version", t.Version), zap.Ints("slaves", ids))
	m.routes.Store(snap)
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
		m.opts.ID, m.opts.JobLease.Milliseconds()).Int64()
	if err != nil {
		return fmt.Errorf("acquire job lease: %w", err)
	}
	if fence < 0 {
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
	ok, err := renewScript.Run(ctx, m.deps.Redis, []string{jk.Owner()}, m.opts.ID, m.opts.JobLease.Milliseconds()).Bool()
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
	log := m.log.With(zap.String("job", name))
	log.Info("job acquired", zap.Int64("fence", fence))
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(owned.done)
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
	if err := releaseScript.Run(ctx, m.deps.Redis, []string{jk.Owner()}, m.opts.ID).Err(); err != nil {
		return fmt.Errorf("release job lease: %w", err)
	}
	return nil
}

// acquireScript takes a job's lease (KEYS[1]) for ARGV[1] for ARGV[2] ms
// and returns the new fencing token (KEYS[2]); -1 if another master holds it.
var acquireScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return -1 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if cur then return tonumber(redis.call('GET', KEYS[2]) or '0') end
return redis.call('INCR', KEYS[2])
`)

// renewScript extends ARGV[1]'s lease of KEYS[1] to ARGV[2] ms; 0 if lost.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// releaseScript drops ARGV[1]'s lease of KEYS[1].
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`)
