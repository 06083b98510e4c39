package master

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/queue"
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
	seed     string // the base URL of the site the test serves, if any
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	rdb, keys := testenv.Redis(t)
	return newFixtureOn(t, rdb, keys, DefaultOptions())
}

// newFixtureOn is newFixture on the Redis given, with the master's
// options (its ID set here).
func newFixtureOn(t *testing.T, rdb *redis.Client, keys cluster.Keys, opts Options) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	path := filepath.Join(t.TempDir(), "failed.jsonl")
	failures, err := store.OpenJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = failures.Close() })
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
	f.submitSpec(t, nil, seeds...)
}

// submitSpec submits a job named news with the given seeds, its spec (a
// short form: .item a to the details, their h1 as title) changed by edit
// when edit is not nil.
func (f *fixture) submitSpec(t *testing.T, edit func(*jobspec.Job), seeds ...string) {
	t.Helper()
	spec := jobspec.Default()
	spec.Name, spec.Seeds, spec.AllowPrivateNetworks = "news", seeds, true
	spec.DetailLink = &jobspec.LinkRule{CSS: ".item a"}
	spec.Fields = map[string]jobspec.FieldRule{"title": {CSS: "h1"}}
	spec.Dedup.Capacity = 10000
	if edit != nil {
		edit(&spec)
	}
	if err := f.jobs(t).Submit(f.ctx, &spec); err != nil {
		t.Fatalf("submit: %v", err)
	}
}

// startRound starts round 1 of r's job and queues all its seeds.
func (f *fixture) startRound(t *testing.T, r *jobRunner) {
	t.Helper()
	if _, err := r.frontier.startRound(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.seed(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
}

// runDownloader runs the master's downloader (list pages, sitemaps and
// robots.txt go through it) until the test ends.
func (f *fixture) runDownloader(t *testing.T) {
	t.Helper()
	ctx, stop := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = f.m.dl.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
}

// processEntries takes the frontier's next n entries, hands those pick
// keeps (all when pick is nil) to r as feed does, and waits until r is
// done with each: committed, or noted for another delivery. It returns
// the entries handed over.
func (f *fixture) processEntries(t *testing.T, r *jobRunner, n int, pick func(cluster.ListPage) bool) []queue.Delivery {
	t.Helper()
	ds, err := r.lists.Take(f.ctx, n, time.Minute)
	if err != nil || len(ds) != n {
		t.Fatalf("take %d list pages: %+v %v", n, ds, err)
	}
	var started []queue.Delivery
	for _, d := range ds {
		if page, err := cluster.DecodeListPage(d.Entry); pick == nil || (err == nil && pick(page)) {
			r.startList(f.ctx, 1, d)
			started = append(started, d)
		}
	}
	testenv.Eventually(t, time.Minute, "the runner is done with its list pages", func() bool { return r.inProgressCount() == 0 })
	return started
}

// failureRecords closes the fixture's failure store and returns its
// records, one a line.
func (f *fixture) failureRecords(t *testing.T) []string {
	t.Helper()
	_ = f.failures.Close()
	data, err := os.ReadFile(f.failPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.FieldsFunc(string(data), func(r rune) bool { return r == '\n' })
}

// serveSite serves pages on loopback until the test ends: the body given
// for each path (HTML, XML for a path ending .xml, text for robots.txt),
// 404 for others. In a body $BASE is the site's URL and $OTHERHOST the
// same server reached as localhost (another host); a body
// "redirect:<url>" redirects there.
func serveSite(t *testing.T, pages map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, port, _ := strings.Cut(r.Host, ":")
		body = strings.NewReplacer("$BASE", "http://"+r.Host, "$OTHERHOST", "http://localhost:"+port).Replace(body)
		if to, ok := strings.CutPrefix(body, "redirect:"); ok {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, ".xml"):
			w.Header().Set("Content-Type", "application/xml")
		case r.URL.Path == "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// testSlaves bounds the slave IDs the tests route to.
const testSlaves = 8

// queuedTasks returns the tasks queued for the job's slaves 0 to
// testSlaves-1, by slave.
func (f *fixture) queuedTasks(t *testing.T) map[int][]cluster.Task {
	t.Helper()
	out := map[int][]cluster.Task{}
	for slave := 0; slave < testSlaves; slave++ {
		for _, raw := range f.rdb.LRange(f.ctx, f.jk.Queue(slave), 0, -1).Val() {
			task, err := cluster.DecodeTask(raw)
			if err != nil {
				t.Fatalf("queued task %q: %v", raw, err)
			}
			out[slave] = append(out[slave], task)
		}
	}
	return out
}

// frontierPages returns the list pages waiting on the frontier.
func (f *fixture) frontierPages(t *testing.T) []cluster.ListPage {
	t.Helper()
	var out []cluster.ListPage
	for _, e := range f.rdb.LRange(f.ctx, f.jk.Frontier(), 0, -1).Val() {
		page, err := cluster.DecodeListPage(e)
		if err != nil {
			t.Fatalf("frontier entry %q: %v", e, err)
		}
		out = append(out, page)
	}
	return out
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
