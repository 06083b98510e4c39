package master

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
)

// fixture is a master on a fresh key prefix with a submitted job, whose
// runner the tests drive step by step instead of through Run.
type fixture struct {
	ctx      context.Context
	rdb      *redis.Client
	keys     cluster.Keys
	jk       cluster.JobKeys
	m        *Master
	failures *store.JSONL
	failPath string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	path := filepath.Join(t.TempDir(), "failed.jsonl")
	failures, err := store.OpenJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = failures.Close() })
	opts := DefaultOptions()
	opts.ID = "test-master"
	m, err := New(opts, Deps{Redis: rdb, Keys: keys, Failures: failures})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{ctx: ctx, rdb: rdb, keys: keys, jk: keys.Job("news"), m: m, failures: failures,
		failPath: store.FailuresPath(path)}
}

// submit submits a job named news with the given seeds.
func (f *fixture) submit(t *testing.T, seeds ...string) {
	t.Helper()
	spec := cluster.DefaultJobSpec()
	spec.Name, spec.Seeds, spec.AllowPrivateNetworks = "news", seeds, true
	spec.DetailLink = &cluster.LinkRule{CSS: ".item a"}
	spec.Fields = map[string]cluster.FieldRule{"title": {CSS: "h1"}}
	spec.Dedup.Capacity = 10000
	if err := f.jobs(t).Submit(f.ctx, &spec); err != nil {
		t.Fatalf("submit: %v", err)
	}
}

// jobs is a client of the fixture's cluster.
func (f *fixture) jobs(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(f.rdb, client.Options{Keys: f.keys, MaxSlaves: f.m.opts.MaxSlaves})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runner acquires the job the way tendJob does and returns its loaded
// runner, with slaves live (IDs given) for routing.
func (f *fixture) runner(t *testing.T, live ...int) *jobRunner {
	t.Helper()
	fence, err := acquireScript.Run(f.ctx, f.rdb, []string{f.jk.Owner(), f.jk.Fence()}, f.m.token, 10000).Int64()
	if err != nil || fence < 0 {
		t.Fatalf("acquire job: %d, %v", fence, err)
	}
	table := assign.Table{Version: 1}
	for _, id := range live {
		table.Nodes = append(table.Nodes, assign.Node{ID: id, Weight: 32})
	}
	f.m.useTable(table)
	r := &jobRunner{m: f.m, name: "news", keys: f.jk, fence: fence, log: f.m.log}
	if err := r.load(f.ctx); err != nil {
		t.Fatalf("load: %v", err)
	}
	return r
}

// task is a valid task's wire form for path on example.com.
func task(path string) string {
	return cluster.Task{URL: "https://example.com/" + path, FP: strings.Repeat("ab", 20), Job: "news"}.Encode()
}

func seeds(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("https://example.com/list/%d", i)
	}
	return out
}

func redisZ(member string) redis.Z {
	return redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: member}
}
