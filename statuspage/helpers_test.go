package statuspage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/membership"
	"github.com/crawler-dev/crawler/proxy"
)

// fixture is a cluster in the test Redis that the tests write the way its
// processes would: client.Client.Submit for jobs, the stats hash counters a
// master and its slaves increment, slave queues, registrations, proxies.
type fixture struct {
	t    testing.TB
	ctx  context.Context
	rdb  *redis.Client
	keys cluster.Keys
	reg  *membership.Registry
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	reg, err := membership.New(rdb, keys, membership.Options{Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: ctx, rdb: rdb, keys: keys, reg: reg}
}

// submit submits a job with client.Client.Submit and marks it running, as a
// master that takes it does.
func (f *fixture) submit(name string) {
	f.t.Helper()
	spec := jobspec.Default()
	spec.Name, spec.Seeds = name, []string{"https://example.com/list/1"}
	spec.DetailLink = &jobspec.LinkRule{CSS: ".item a"}
	spec.Fields = map[string]jobspec.FieldRule{"title": {CSS: "h1"}}
	spec.Dedup.Capacity = 10000
	jobs, err := client.New(f.rdb, client.Options{Keys: f.keys})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := jobs.Submit(f.ctx, &spec); err != nil {
		f.t.Fatal(err)
	}
	f.start(name)
}

// start writes the state hash a master writes when it takes a job.
func (f *fixture) start(name string) {
	f.t.Helper()
	err := f.rdb.HSet(f.ctx, f.keys.Job(name).State(), cluster.StateField, cluster.StateRunning,
		cluster.StateStartedAt, time.Now().Add(-90*time.Second).UTC().Format(time.RFC3339Nano), cluster.StateRound, 1).Err()
	if err != nil {
		f.t.Fatal(err)
	}
}

// step is one slice of a crawl on one slave: detail links routed to it or
// found duplicate (by the master), pages stored or failed (by the slave).
type step struct {
	slave                             int
	routed, dups, stored, failed, lps int64
}

// crawl increments the job's counters as the master and the slave do,
// the per-slave ones (cluster.SlaveStat) included.
func (f *fixture) crawl(job string, s step) {
	f.t.Helper()
	key := f.keys.Job(job).Stats()
	pipe := f.rdb.Pipeline()
	for stat, n := range map[string]int64{cluster.StatRouted: s.routed, cluster.StatStored: s.stored,
		cluster.StatFailed: s.failed} {
		pipe.HIncrBy(f.ctx, key, stat, n)
		pipe.HIncrBy(f.ctx, key, cluster.SlaveStat(stat, s.slave), n)
	}
	pipe.HIncrBy(f.ctx, key, cluster.StatDuplicates, s.dups)
	pipe.HIncrBy(f.ctx, key, cluster.StatListPages, s.lps)
	if _, err := pipe.Exec(f.ctx); err != nil {
		f.t.Fatal(err)
	}
}

// queue puts tasks on slave's queue and in its in-flight set.
func (f *fixture) queue(job string, slave, queued, inflight int) {
	f.t.Helper()
	jk := f.keys.Job(job)
	pipe := f.rdb.Pipeline()
	for i := range queued {
		pipe.RPush(f.ctx, jk.Queue(slave), fmt.Sprintf("task-%d-%d", slave, i))
	}
	for i := range inflight {
		pipe.ZAdd(f.ctx, jk.Inflight(slave), redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()),
			Member: fmt.Sprintf("flight-%d-%d", slave, i)})
	}
	if _, err := pipe.Exec(f.ctx); err != nil {
		f.t.Fatal(err)
	}
}

// register adds a live slave to the node table.
func (f *fixture) register(id int, host string, concurrency int) {
	f.t.Helper()
	err := f.reg.Register(f.ctx, cluster.NodeInfo{ID: id, Host: host, PID: 4000 + id, Concurrency: concurrency,
		Token: fmt.Sprintf("run-token-%d", id)})
	if err != nil {
		f.t.Fatal(err)
	}
}

// seedProxies puts proxies in the pool as if they had passed a check.
func (f *fixture) seedProxies(urls ...string) {
	f.t.Helper()
	opts := proxy.DefaultOptions()
	opts.CheckURL = "http://127.0.0.1:1/" // never contacted by Seed
	v, err := proxy.NewValidator(f.rdb, f.keys, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	defer v.Close()
	seeds := make([]proxy.Seeded, len(urls))
	for i, u := range urls {
		p, err := proxy.Parse(u)
		if err != nil {
			f.t.Fatal(err)
		}
		seeds[i] = proxy.Seeded{Proxy: p, Latency: time.Duration(40+30*i) * time.Millisecond, Tunnel: true}
	}
	if err := v.Seed(f.ctx, seeds); err != nil {
		f.t.Fatal(err)
	}
}

// source is a RedisSource over the fixture's cluster, with the fixture's
// lease.
func (f *fixture) source(mut func(*RedisOptions)) *RedisSource {
	f.t.Helper()
	opts := DefaultRedisOptions()
	opts.Lease = time.Minute
	if mut != nil {
		mut(&opts)
	}
	src, err := NewRedisSource(f.rdb, f.keys, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return src
}

// serve runs a status page on a free loopback port until the test ends.
func (f *fixture) serve(src Source, mut func(*Options)) *Server {
	f.t.Helper()
	opts := DefaultOptions()
	opts.Addr = "127.0.0.1:0"
	if mut != nil {
		mut(&opts)
	}
	srv, err := New(src, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	f.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			f.t.Errorf("run: %v", err)
		}
	})
	return srv
}

// get fetches url and returns the status, headers and body.
func get(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

// getSnapshot fetches and decodes api/status.
func getSnapshot(t *testing.T, base string) Snapshot {
	t.Helper()
	code, _, body := get(t, base+"api/status")
	if code != http.StatusOK {
		t.Fatalf("api/status: %d %s", code, body)
	}
	return decodeSnapshot(t, body)
}

// decodeSnapshot decodes api/status, all but the proxy listing (whose
// proxy.Duration fields can be written as JSON but not read back).
func decodeSnapshot(t *testing.T, body []byte) Snapshot {
	t.Helper()
	var snap struct {
		Snapshot
		Proxies json.RawMessage `json:"proxies"`
	}
	if err := json.Unmarshal(body, &snap); err != nil {
		t.Fatalf("api/status: %v in %s", err, body)
	}
	return snap.Snapshot
}

// stubSource is a Source whose answers a test sets, counting its reads;
// for the handler's own logic (caching, errors), beside the tests over
// RedisSource.
type stubSource struct {
	snap  *Snapshot
	err   error
	reads int
}

func (s *stubSource) Snapshot(context.Context) (*Snapshot, error) {
	s.reads++
	if s.err != nil {
		return nil, s.err
	}
	c := *s.snap
	return &c, nil
}

func (s *stubSource) Job(_ context.Context, name string) (*Job, error) {
	if s.err != nil {
		return nil, s.err
	}
	for _, j := range s.snap.Jobs {
		if j.Job == name {
			return &j, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
}

func redisZ(score int64, member string) redis.Z {
	return redis.Z{Score: float64(score), Member: member}
}

var errDown = errors.New("redis: connection refused")
