package slave

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/neardup"
	"github.com/crawler-dev/crawler/queue"
)

// job is what a slave keeps of a running job.
type job struct {
	name      string
	submitted string // the submission it was loaded from
	spec      *jobspec.Job
	keys      cluster.JobKeys
	queue     *queue.SlaveQueue // this slave's queue of the job
	ledger    *ledger.Ledger    // the job's counters: acknowledgements count there
	near      *neardup.Index
	rules     *extract.Rules  // its page kinds, compiled
	dl        *downloader.Job // its request settings, cookies and robots.txt
	byKind    bool            // it has several item kinds, its tasks counted by kind too
	// renderKinds are its kinds whose pages are rendered; parked says
	// once that this slave handed their tasks on (render.go).
	renderKinds map[string]bool
	parked      sync.Once
	// rendered counts the fields its rendered pages leave empty, to warn
	// when most do (render.go).
	rendered renderedFields
	// stealArmed says the last take of this job's queue got tasks: when
	// it next runs dry, the slave steals from the longest queue once
	// (steal.go). Read and written by the dispatcher alone.
	stealArmed bool
	// servedAt is when (unix ns) a take last visited the job: it got
	// tasks, or found none (it waited for nothing). A job passed over
	// while others of higher priority fill the slave ages from it
	// (orderJobs).
	servedAt atomic.Int64
	// stopped ends when the job stops running here (client cancel asked to
	// stop it, client pause paused it, or it finished): its requests not
	// yet sent are abandoned, and their tasks handed back uncounted
	// (handBackStopped); those on the wire finish and are acknowledged.
	stopped context.Context
	stop    context.CancelFunc
}

// jobSet is the running jobs, refreshed from Redis, visited round-robin so
// no job starves another.
type jobSet struct {
	rdb   redis.UniversalClient
	keys  cluster.Keys
	slave int
	aging time.Duration // how long a job waits to gain one priority
	log   *zap.Logger
	dl    *downloader.Downloader
	near  *metrics.NearDup // what each job's near-duplicate mirror holds
	// onRender, when set, is told the name of each job loaded whose
	// pages are rendered.
	onRender func(job string)

	mu      sync.Mutex
	byName  map[string]*job
	running []*job
	next    int

	version   string    // the jobs' version at the last refresh
	refreshed time.Time // when the running jobs were last read
}

func newJobSet(rdb redis.UniversalClient, keys cluster.Keys, slave int, aging time.Duration, dl *downloader.Downloader,
	near *metrics.NearDup, log *zap.Logger) *jobSet {
	return &jobSet{rdb: rdb, keys: keys, slave: slave, aging: aging, dl: dl, near: near, log: log, byName: map[string]*job{}}
}

// has reports whether the job of that name runs here.
func (s *jobSet) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byName[name] != nil
}

// fullRefresh is how often the running jobs are read even when the jobs'
// version says nothing changed.
const fullRefresh = 10 * time.Second

// refreshIfChanged reloads the running jobs when the jobs' version moved
// (a job was submitted, started or finished a round, was cancelled), or
// every fullRefresh: an idle slave costs Redis a GET a second.
func (s *jobSet) refreshIfChanged(ctx context.Context) error {
	v, err := s.rdb.Get(ctx, s.keys.JobsVersion()).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("read the jobs' version: %w", err)
	}
	if v == s.version && time.Since(s.refreshed) < fullRefresh {
		return nil
	}
	if err := s.refresh(ctx); err != nil {
		return err
	}
	s.version, s.refreshed = v, time.Now()
	return nil
}

// refresh reloads the set of running jobs. A job whose spec cannot be
// loaded is left out (and logged) without keeping the others from running.
func (s *jobSet) refresh(ctx context.Context) error {
	names, err := s.rdb.ZRange(ctx, s.keys.Jobs(), 0, -1).Result()
	if err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	pipe := s.rdb.Pipeline()
	states := make([]*redis.SliceCmd, len(names))
	for i, n := range names {
		states[i] = pipe.HMGet(ctx, s.keys.Job(n).State(), cluster.StateField, cluster.StateSubmittedAt, cluster.StateCancel)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("read job states: %w", err)
	}
	var running []*job
	for i, n := range names {
		vals := states[i].Val()
		state, _ := vals[0].(string)
		submitted, _ := vals[1].(string)
		if state != cluster.StateRunning || vals[2] != nil { // vals[2]: a cancel was asked for
			continue
		}
		j, err := s.load(ctx, n, submitted)
		if err != nil {
			s.log.Error("job left out: its spec cannot be loaded", zap.String("job", n), zap.Error(err))
			continue
		}
		running = append(running, j)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = running
	s.forgetStopped()
	return nil
}

// forgetStopped drops the jobs that no longer run from the cache, with
// what they hold (a job's near-duplicate mirror grows with the pages it
// stored), and abandons their requests not yet sent: a job that runs again
// is loaded afresh. s.mu is held.
func (s *jobSet) forgetStopped() {
	keep := make(map[*job]bool, len(s.running))
	for _, j := range s.running {
		keep[j] = true
	}
	for name, j := range s.byName {
		if !keep[j] {
			j.stop()
			delete(s.byName, name)
			s.near.Forget(name)
		}
	}
}

// load returns the job, reading its spec unless this submission is cached.
func (s *jobSet) load(ctx context.Context, name, submitted string) (*job, error) {
	s.mu.Lock()
	j := s.byName[name]
	s.mu.Unlock()
	if j != nil && j.submitted == submitted {
		return j, nil
	}
	jk := s.keys.Job(name)
	raw, err := s.rdb.Get(ctx, jk.Spec()).Bytes()
	if err != nil {
		return nil, fmt.Errorf("read spec of job %s: %w", name, err)
	}
	spec, err := jobspec.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", name, err)
	}
	near, err := neardup.New(s.rdb, neardup.JobOptions(spec.Dedup, jk))
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", name, err)
	}
	dl, err := s.dl.NewJob(spec)
	if err != nil {
		return nil, err
	}
	rules, err := extract.CompileJob(spec)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", name, err)
	}
	j = &job{name: name, submitted: submitted, spec: spec, keys: jk, rules: rules,
		queue: queue.New(s.rdb, jk).WithBands(spec.QueueBands()).Slave(s.slave), ledger: ledger.New(s.rdb, jk), near: near, dl: dl,
		byKind: !spec.ShortForm() && len(spec.ItemKindNames()) > 1, renderKinds: spec.RenderKinds()}
	j.queue.SetAging(s.aging)
	j.servedAt.Store(time.Now().UnixNano())
	j.stopped, j.stop = context.WithCancel(context.Background())
	if len(j.renderKinds) > 0 && s.onRender != nil {
		s.onRender(name)
	}
	s.mu.Lock()
	s.byName[name] = j
	s.mu.Unlock()
	return j, nil
}

// any reports whether some running job satisfies f.
func (s *jobSet) any(f func(*job) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.running, f)
}

// rotation returns the running jobs in the order a take visits them:
// round-robin, starting after the one visited first last time; when some
// job has a priority (jobspec.Job.Priority), by effective priority first
// (orderJobs).
func (s *jobSet) rotation() []*job {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.running)
	if n == 0 {
		return nil
	}
	s.next = (s.next + 1) % n
	out := make([]*job, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, s.running[(s.next+i)%n])
	}
	return orderJobs(out, time.Now(), s.aging)
}

// orderJobs orders jobs, given in round-robin order, by effective
// priority, highest first: the job's priority plus one for each aging it
// has waited since a take last visited it (job.servedAt), so that a job
// of high priority fills the slave first and one of lower priority that
// keeps being passed over gets its turn in the end. Ties keep the
// round-robin order; jobs all of priority 0 keep it whole.
func orderJobs(jobs []*job, now time.Time, aging time.Duration) []*job {
	if !slices.ContainsFunc(jobs, func(j *job) bool { return j.spec.Priority != 0 }) {
		return jobs
	}
	eff := make(map[*job]float64, len(jobs))
	for _, j := range jobs {
		waited := now.Sub(time.Unix(0, j.servedAt.Load()))
		eff[j] = float64(j.spec.Priority) + float64(max(0, waited))/float64(aging)
	}
	slices.SortStableFunc(jobs, func(a, b *job) int { return cmp.Compare(eff[b], eff[a]) })
	return jobs
}
