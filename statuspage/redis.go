package statuspage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/membership"
	"github.com/crawler-dev/crawler/politeness"
	"github.com/crawler-dev/crawler/proxy"
	"github.com/crawler-dev/crawler/statuspage/feed"
)

// RedisOptions configures a RedisSource.
type RedisOptions struct {
	// MaxSlaves is the size of the virtual node table, as the cluster's
	// other processes use it. Default cluster.DefaultMaxSlaves.
	MaxSlaves int
	// Lease is the slaves' heartbeat lease: a slave's last heartbeat is
	// its lease deadline minus Lease. Default membership.DefaultLease.
	Lease time.Duration
	// MaxJobs is how many of the newest jobs a snapshot reads. Default 50.
	MaxJobs int
	// MaxProxies is how many of the best usable proxies a snapshot lists;
	// the pool's counts are there whatever it is. Default 10.
	MaxProxies int
	// Concurrency is how many jobs are read at once. Default 8.
	Concurrency int
}

// DefaultRedisOptions returns the defaults.
func DefaultRedisOptions() RedisOptions {
	return RedisOptions{MaxSlaves: cluster.DefaultMaxSlaves, Lease: membership.DefaultLease, MaxJobs: 50,
		MaxProxies: 10, Concurrency: 8}
}

// Validate names the first option out of range.
func (o RedisOptions) Validate() error {
	switch {
	case cluster.CheckMaxSlaves(o.MaxSlaves) != nil:
		return cluster.CheckMaxSlaves(o.MaxSlaves)
	case o.Lease < 10*time.Millisecond:
		return cluster.Invalid("Lease", o.Lease, "is below 10ms")
	case o.MaxJobs < 1 || o.MaxJobs > 1000:
		return cluster.Invalid("MaxJobs", o.MaxJobs, "is outside 1..1000")
	case o.MaxProxies < 0 || o.MaxProxies > 1000:
		return cluster.Invalid("MaxProxies", o.MaxProxies, "is outside 0..1000")
	case o.Concurrency < 1 || o.Concurrency > 100:
		return cluster.Invalid("Concurrency", o.Concurrency, "is outside 1..100")
	}
	return nil
}

// RedisSource reads the cluster's state from its Redis, through the read
// paths `crawler client` uses. A snapshot costs about 3 round trips per
// job, 2 for the slaves and 2 for the proxy pool.
type RedisSource struct {
	rdb    redis.UniversalClient
	keys   cluster.Keys
	opts   RedisOptions
	reg    *membership.Registry
	pool   *proxy.Pool
	budget *politeness.Budget
	jobs   *client.Client
}

// NewRedisSource returns a Source over the cluster under keys in rdb.
func NewRedisSource(rdb redis.UniversalClient, keys cluster.Keys, opts RedisOptions) (*RedisSource, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	reg, err := membership.New(rdb, keys, membership.Options{Lease: opts.Lease, MaxSlaves: opts.MaxSlaves})
	if err != nil {
		return nil, fmt.Errorf("status source: %w", err)
	}
	pool, err := proxy.NewPool(rdb, keys, proxy.DefaultPoolOptions())
	if err != nil {
		return nil, fmt.Errorf("status source: %w", err)
	}
	budget, err := newBudget(rdb, keys)
	if err != nil {
		return nil, fmt.Errorf("status source: %w", err)
	}
	jobs, err := client.New(rdb, client.Options{Keys: keys, MaxSlaves: opts.MaxSlaves})
	if err != nil {
		return nil, fmt.Errorf("status source: %w", err)
	}
	return &RedisSource{rdb: rdb, keys: keys, opts: opts, reg: reg, pool: pool, budget: budget, jobs: jobs}, nil
}

// Job reads one job's status.
func (s *RedisSource) Job(ctx context.Context, name string) (*Job, error) {
	st, err := s.jobs.Status(ctx, name)
	if errors.Is(err, client.ErrJobNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err != nil {
		return nil, err
	}
	j := NewJob(*st)
	return &j, nil
}

// Snapshot reads the newest jobs, the slaves and the proxy pool. It fails
// only when Redis cannot be read at all; a part that cannot be read is
// named in Snapshot.Errors and left empty.
func (s *RedisSource) Snapshot(ctx context.Context) (*Snapshot, error) {
	nodes, nodesErr := s.reg.Nodes(ctx) // drops lapsed leases first
	h, err := s.readHeader(ctx)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Time: h.now, Cluster: Cluster{Prefix: s.prefix(), MaxSlaves: s.opts.MaxSlaves,
		Lease: s.opts.Lease.String(), LeaseMS: s.opts.Lease.Milliseconds(), Epoch: h.epoch, JobsTotal: h.jobsTotal}, Jobs: []Job{}}
	if nodesErr != nil {
		snap.Errors = append(snap.Errors, nodesErr.Error())
	}
	snap.Jobs, snap.Errors = s.readJobs(ctx, h.jobs, snap.Errors)
	snap.Errors = s.readFailures(ctx, snap.Jobs, snap.Errors)
	loads, err := feed.ReadLoads(ctx, s.rdb, s.keys, nodeIDs(nodes))
	if err != nil {
		snap.Errors = append(snap.Errors, err.Error())
	}
	snap.Slaves = slavesOf(nodes, loads, h.deadlines, s.opts.Lease, h.now, snap.Jobs)
	snap.Hosts, err = s.readHosts(ctx, loads, h.now)
	if err != nil {
		snap.Errors = append(snap.Errors, err.Error())
	}
	snap.Proxies, err = s.readProxies(ctx)
	if err != nil {
		snap.Errors = append(snap.Errors, err.Error())
	}
	return snap, nil
}

func (s *RedisSource) prefix() string {
	if s.keys.Prefix == "" {
		return cluster.DefaultPrefix
	}
	return s.keys.Prefix
}

// header is what a snapshot reads in its first round trip.
type header struct {
	now       time.Time
	epoch     int64
	jobsTotal int64
	jobs      []string
	deadlines map[int]time.Time // lease deadline by slave ID
}

// readHeader reads the clock, the node table's epoch and leases and the
// job index in one round trip. membership.Registry does not expose lease
// deadlines, so the leases are read here from NodeKeys.Leases.
func (s *RedisSource) readHeader(ctx context.Context) (header, error) {
	nodes := s.keys.Nodes()
	pipe := s.rdb.Pipeline()
	clock := pipe.Time(ctx)
	epoch := pipe.Get(ctx, nodes.Epoch())
	leases := pipe.ZRangeWithScores(ctx, nodes.Leases(), 0, -1)
	total := pipe.ZCard(ctx, s.keys.Jobs())
	jobs := pipe.ZRevRange(ctx, s.keys.Jobs(), 0, int64(s.opts.MaxJobs-1))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return header{}, fmt.Errorf("read cluster status: %w", err)
	}
	h := header{now: clock.Val(), jobsTotal: total.Val(), jobs: jobs.Val(), deadlines: map[int]time.Time{}}
	h.epoch, _ = epoch.Int64()
	for _, z := range leases.Val() {
		if id, err := strconv.Atoi(fmt.Sprint(z.Member)); err == nil {
			h.deadlines[id] = time.UnixMilli(int64(z.Score))
		}
	}
	return h, nil
}

// readJobs reads the jobs' statuses, Concurrency at a time, in index
// order. A job indexed but not yet written (a submission under way) is
// left out; a job that cannot be read is named in errs.
func (s *RedisSource) readJobs(ctx context.Context, names []string, errs []string) ([]Job, []string) {
	sts := make([]*client.Status, len(names))
	fails := make([]error, len(names))
	var g errgroup.Group
	g.SetLimit(s.opts.Concurrency)
	for i, name := range names {
		g.Go(func() error {
			sts[i], fails[i] = s.jobs.Status(ctx, name)
			return nil
		})
	}
	_ = g.Wait()
	jobs := make([]Job, 0, len(names))
	for i, st := range sts {
		switch {
		case errors.Is(fails[i], client.ErrJobNotFound):
		case fails[i] != nil:
			errs = append(errs, fails[i].Error())
		default:
			jobs = append(jobs, NewJob(*st))
		}
	}
	return jobs, errs
}

// readProxies lists the pool, keeping its MaxProxies best usable entries.
func (s *RedisSource) readProxies(ctx context.Context) (*proxy.Listing, error) {
	l, err := s.pool.List(ctx, false)
	if err != nil {
		return nil, err
	}
	if len(l.Proxies) > s.opts.MaxProxies {
		l.Proxies = l.Proxies[:s.opts.MaxProxies]
	}
	if l.Proxies == nil {
		l.Proxies = []proxy.Entry{}
	}
	return l, nil
}

// readFailures adds each job's failures by kind and last reasons.
func (s *RedisSource) readFailures(ctx context.Context, jobs []Job, errs []string) []string {
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Job
	}
	fs, err := feed.ReadFailures(ctx, s.rdb, s.keys, names)
	if err != nil {
		return append(errs, err.Error())
	}
	for i := range jobs {
		if f, ok := fs[jobs[i].Job]; ok {
			jobs[i].Failures = &f
		}
	}
	return errs
}

func nodeIDs(nodes []cluster.NodeInfo) []int {
	ids := make([]int, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	return ids
}
