package slave

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// hangingJob is a running job of three tasks on a site that answers
// them only once the test ends; arrived counts the requests that reached
// it.
type hangingJob struct {
	ctx     context.Context
	rdb     *redis.Client
	keys    cluster.Keys
	jk      cluster.JobKeys
	arrived atomic.Int64
}

func newHangingJob(t *testing.T) *hangingJob {
	t.Helper()
	h := &hangingJob{}
	h.rdb, h.keys = testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	h.ctx = ctx
	release := make(chan struct{})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		h.arrived.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><body><h1>Late</h1></body></html>"))
	}))
	t.Cleanup(site.Close)
	t.Cleanup(func() { close(release) }) // runs first
	h.jk = runningJob(t, ctx, h.rdb, h.keys, "hanging", site.URL, "/a", "/b", "/c")
	return h
}

// waitHeld waits until a slave of concurrency 1 holds the three tasks,
// one of them on the wire.
func (h *hangingJob) waitHeld(t *testing.T) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, "all three held, one on the wire", func() bool {
		return h.arrived.Load() == 1 && h.rdb.ZCard(h.ctx, h.jk.Inflight(0)).Val() == 3
	})
}

// TestSlave_handBack: a slave that stops while it holds tasks (one on the
// wire past its drain timeout, others waiting their turn) hands them all
// back to its queue, counted as nothing.
func TestSlave_handBack(t *testing.T) {
	h := newHangingJob(t)
	opts := DefaultOptions()
	opts.Concurrency, opts.DrainTimeout = 1, 10*time.Millisecond
	s, err := New(opts, Deps{Redis: h.rdb, Keys: h.keys, Store: jsonlStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	h.waitHeld(t)
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if q, inflight := h.rdb.LLen(h.ctx, h.jk.Queue(0)).Val(), h.rdb.ZCard(h.ctx, h.jk.Inflight(0)).Val(); q != 3 || inflight != 0 {
		t.Errorf("%d queued, %d in flight after the stop; want all 3 handed back", q, inflight)
	}
	if stats := h.rdb.HGetAll(h.ctx, h.jk.Stats()).Val(); len(stats) != 0 {
		t.Errorf("stats %v, want nothing counted", stats)
	}
}
