package slave

import (
	dto "github.com/prometheus/client_model/go"

	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/store"
)

// page serves one small HTML page on loopback for the test's duration.
func page(t *testing.T) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><body><h1>A page</h1></body></html>"))
	}))
	t.Cleanup(site.Close)
	return site
}

// runningJob writes a running job named name to Redis the way a master
// leaves it, and queues tasks for slave 0 at the given paths of base.
func runningJob(t testing.TB, ctx context.Context, rdb *redis.Client, keys cluster.Keys, name, base string, paths ...string) cluster.JobKeys {
	t.Helper()
	return runningJobSpec(t, ctx, rdb, keys, name, base, nil, paths...)
}

// runningJobSpec is runningJob with the job's spec changed by edit (when
// not nil) before it is written.
func runningJobSpec(t testing.TB, ctx context.Context, rdb *redis.Client, keys cluster.Keys, name, base string,
	edit func(*jobspec.Job), paths ...string) cluster.JobKeys {
	t.Helper()
	spec := jobspec.Default()
	spec.Name, spec.Seeds, spec.AllowPrivateNetworks = name, []string{base + "/list"}, true
	spec.DetailLink = &jobspec.LinkRule{CSS: "a"}
	spec.Fields = map[string]jobspec.FieldRule{"title": {CSS: "h1"}}
	if edit != nil {
		edit(&spec)
	}
	spec.ApplyDefaults()
	raw, _ := json.Marshal(&spec)
	jk := keys.Job(name)
	rdb.Set(ctx, jk.Spec(), raw, 0)
	rdb.HSet(ctx, jk.State(), cluster.StateField, cluster.StateRunning, cluster.StateSubmittedAt, "t0")
	rdb.ZAdd(ctx, keys.Jobs(), redis.Z{Score: 1, Member: name})
	for _, p := range paths {
		rdb.RPush(ctx, jk.Queue(0), taskFor(name, base+p))
	}
	return jk
}

func taskFor(job, url string) string {
	fp := canon.RequestFingerprint("GET", url, nil)
	return cluster.Task{URL: url, FP: fp.String(), Job: job}.Encode()
}

// runSlave runs a slave until the test ends.
func runSlave(t testing.TB, ctx context.Context, opts Options, deps Deps) {
	t.Helper()
	s, err := New(opts, deps)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// mongoStore opens a store on a database of the test's own on the test
// MongoDB-wire server, closed when the test ends (after the slaves it
// started stop).
func mongoStore(t testing.TB, ctx context.Context) *store.Mongo {
	t.Helper()
	uri, _ := testenv.MongoDBURI(t)
	m, err := store.OpenMongo(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// jsonlStore opens a JSON Lines store in the test's directory.
func jsonlStore(t *testing.T) *store.JSONL {
	t.Helper()
	items, _ := jsonlStoreAt(t)
	return items
}

// jsonlStoreAt is jsonlStore that also returns the items file's path.
func jsonlStoreAt(t *testing.T) (*store.JSONL, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "items.jsonl")
	items, err := store.OpenJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = items.Close() })
	return items, path
}

// brokenItems is a real store whose item writes always fail, as a write
// MongoDB refuses for good would (a document over 16 MB, say).
type brokenItems struct {
	ItemStore
	attempts atomic.Int64
}

var errTooLarge = errors.New("document too large")

func (b *brokenItems) SaveVisits(_ context.Context, _ time.Time, visits []store.Visit) []store.VisitResult {
	b.attempts.Add(int64(len(visits)))
	res := make([]store.VisitResult, len(visits))
	for i := range res {
		res[i].Err = errTooLarge
	}
	return res
}

// failingScripts makes the first n script calls whose script matches fail,
// as a Redis that is away would; a hook beside the real Redis.
type failingScripts struct {
	n     atomic.Int64
	calls atomic.Int64 // the script calls matched, failed or not
	match func(cmd redis.Cmder) bool
}

func (f *failingScripts) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f *failingScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !f.match(cmd) {
			return next(ctx, cmd)
		}
		if f.calls.Add(1); f.n.Add(-1) >= 0 {
			err := errors.New("connection reset by peer (injected)")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (f *failingScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// settled waits until slave 0 holds none of the job's tasks, queued or in
// flight: each was acknowledged (or handed back).
func settled(t testing.TB, ctx context.Context, rdb *redis.Client, jk cluster.JobKeys) {
	t.Helper()
	testenv.Eventually(t, time.Minute, "every task settled", func() bool {
		return rdb.LLen(ctx, jk.Queue(0)).Val()+rdb.ZCard(ctx, jk.Inflight(0)).Val() == 0
	})
}

// failureRecords closes items and returns its failure records by URL.
func failureRecords(t *testing.T, items *store.JSONL, path string) map[string]store.Failure {
	t.Helper()
	if err := items.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(store.FailuresPath(path))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	out := map[string]store.Failure{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var f store.Failure
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("failure record %s: %v", line, err)
		}
		out[f.URL] = f
	}
	return out
}

// metricFamily gathers reg and returns the family name, or an empty one
// when it has no series.
func metricFamily(t *testing.T, reg *metrics.Registry, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	return &dto.MetricFamily{}
}
