package slave

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/queue"
)

// job is what a slave keeps of a running job.
type job struct {
	name      string
	submitted string // the submission it was loaded from
	spec      *cluster.JobSpec
	keys      cluster.JobKeys
	queue     *queue.Leased // this slave's queue of the job
	near      *dedup.NearIndex
}

// jobSet is the running jobs, refreshed from Redis, visited round-robin so
// no job starves another.
type jobSet struct {
	rdb   redis.UniversalClient
	keys  cluster.Keys
	slave int

	mu      sync.Mutex
	byName  map[string]*job
	running []*job
	next    int
}

func newJobSet(rdb redis.UniversalClient, keys cluster.Keys, slave int) *jobSet {
	return &jobSet{rdb: rdb, keys: keys, slave: slave, byName: map[string]*job{}}
}

// refresh reloads the set of running jobs.
func (s *jobSet) refresh(ctx context.Context) error {
	names, err := s.rdb.ZRange(ctx, s.keys.Jobs(), 0, -1).Result()
	if err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	pipe := s.rdb.Pipeline()
	states := make([]*redis.SliceCmd, len(names))
	for i, n := range names {
		states[i] = pipe.HMGet(ctx, s.keys.Job(n).State(), cluster.StateField, cluster.StateSubmittedAt)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("read job states: %w", err)
	}
	var running []*job
	for i, n := range names {
		vals := states[i].Val()
		state, _ := vals[0].(string)
		submitted, _ := vals[1].(string)
		if state != cluster.StateRunning {
			continue
		}
		j, err := s.load(ctx, n, submitted)
		if err != nil {
			return err
		}
		running = append(running, j)
	}
	s.mu.Lock()
	s.running = running
	s.mu.Unlock()
	return nil
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
	var spec cluster.JobSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("decode spec of job %s: %w", name, err)
	}
	j = &job{
		name: name, submitted: submitted, spec: &spec, keys: jk,
		queue: queue.New(s.rdb, jk).Slave(s.slave),
		near:  dedup.NewNearIndex(s.rdb, jk.Simhash(), spec.Dedup.Window.Std()),
	}
	s.mu.Lock()
	s.byName[name] = j
	s.mu.Unlock()
	return j, nil
}

// rotation returns the running jobs starting after the one visited first
// last time.
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
	return out
}
