package slave

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// hangingSite answers every page request only once the test ends; it
// counts the requests that arrived.
func hangingSite(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var arrived atomic.Int64
	release := make(chan struct{})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		arrived.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><body><h1>Late</h1></body></html>"))
	}))
	t.Cleanup(site.Close)
	t.Cleanup(func() { close(release) }) // runs first
	return site, &arrived
}

// TestSlave_handBack: a slave that stops while it holds tasks (one on the
// wire past its drain timeout, others waiting their turn) hands them all
// back to its queue, counted as nothing.
func TestSlave_handBack(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	site, arrived := hangingSite(t)
	jk := runningJob(t, ctx, rdb, keys, "stopping", site.URL, "/a", "/b", "/c")
	opts := DefaultOptions()
	opts.Concurrency, opts.DrainTimeout = 1, 10*time.Millisecond
	s, err := New(opts, Deps{Redis: rdb, Keys: keys, Store: jsonlStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	testenv.Eventually(t, 30*time.Second, "all three held, one on the wire", func() bool {
		return arrived.Load() == 1 && rdb.ZCard(ctx, jk.Inflight(0)).Val() == 3
	})
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if q, inflight := rdb.LLen(ctx, jk.Queue(0)).Val(), rdb.ZCard(ctx, jk.Inflight(0)).Val(); q != 3 || inflight != 0 {
		t.Errorf("%d queued, %d in flight after the stop; want all 3 handed back", q, inflight)
	}
	if stats := rdb.HGetAll(ctx, jk.Stats()).Val(); len(stats) != 0 {
		t.Errorf("stats %v, want nothing counted", stats)
	}
}

// TestSlave_stoppedJobHandsBack: when a job stops running (client cancel)
// the slave, still running, hands back at once its tasks of that job not
// yet sent, for the master to drop as cancelled; the one on the wire runs
// to its end.
func TestSlave_stoppedJobHandsBack(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	site, arrived := hangingSite(t)
	jk := runningJob(t, ctx, rdb, keys, "cancelled", site.URL, "/a", "/b", "/c")
	opts := DefaultOptions()
	opts.Concurrency = 1
	runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: jsonlStore(t)})
	testenv.Eventually(t, 30*time.Second, "all three held, one on the wire", func() bool {
		return arrived.Load() == 1 && rdb.ZCard(ctx, jk.Inflight(0)).Val() == 3
	})
	rdb.HSet(ctx, jk.State(), cluster.StateField, cluster.StateFinished)
	rdb.Incr(ctx, keys.JobsVersion())
	testenv.Eventually(t, 30*time.Second, "the two not sent handed back", func() bool {
		return rdb.LLen(ctx, jk.Queue(0)).Val() == 2 && rdb.ZCard(ctx, jk.Inflight(0)).Val() == 1
	})
	if n := arrived.Load(); n != 1 {
		t.Errorf("%d requests reached the site, want only the one sent before the stop", n)
	}
}
