package slave

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
)

// slowLookUp is a store whose look-up of a re-crawl's validators waits
// until release is closed, as a loaded MongoDB-wire server can.
type slowLookUp struct {
	*store.JSONL
	asked   chan struct{} // closed at the first look-up
	once    sync.Once
	release chan struct{}
}

func (s *slowLookUp) Validators(ctx context.Context, ids []string) (map[string]store.Stored, error) {
	s.once.Do(func() { close(s.asked) })
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.JSONL.Validators(ctx, ids)
}

// TestSlave_heldWhileLookedUp: a re-crawl's tasks are held from the take
// on. While the store's look-up of their validators hangs for more than
// a second of the lease, the orphan check runs again and again and hands
// none of them back, so each page is fetched once (before, they were held
// only once looked up, counted orphans meanwhile and fetched twice).
func TestSlave_heldWhileLookedUp(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx := t.Context()
	var fetches sync.Map // path -> *atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := fetches.LoadOrStore(r.URL.Path, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><body><h1>A page</h1></body></html>"))
	}))
	t.Cleanup(site.Close)
	jk := runningJob(t, ctx, rdb, keys, "relook", site.URL)
	paths := []string{"/p/1", "/p/2", "/p/3"}
	for _, p := range paths { // round 2: looked up before the fetch
		fp := canon.RequestFingerprint("GET", site.URL+p, nil)
		rdb.RPush(ctx, jk.Queue(0), cluster.Task{URL: site.URL + p, FP: fp.String(), Job: "relook", Round: 2}.Encode())
	}
	// The scripts on the slave's in-flight set: while its tasks wait for
	// the look-up, the renew loop's, a lease renewal and an orphan check a tick.
	checks := testenv.CountCommands(rdb, testenv.ScriptOn(jk.Inflight(0)))
	st := &slowLookUp{JSONL: jsonlStore(t), asked: make(chan struct{}), release: make(chan struct{})}
	opts := DefaultOptions()
	opts.TaskLease = 3 * time.Second // an orphan check a second, a take "orphaned" after one
	runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: st})

	<-st.asked
	// Three ticks of the renew loop or more after the take (six scripts,
	// two a tick): the tasks' leases are then more than a second short of
	// full, which the orphan check reads as orphaned unless held.
	from := checks.Load()
	testenv.Eventually(t, time.Minute, "three ticks of the renew loop during the look-up", func() bool { return checks.Load() >= from+6 })
	close(st.release)
	settled(t, ctx, rdb, jk)
	for _, p := range paths {
		n, ok := fetches.Load(p)
		if !ok || n.(*atomic.Int64).Load() != 1 {
			got := int64(0)
			if ok {
				got = n.(*atomic.Int64).Load()
			}
			t.Errorf("%s fetched %d times, want once", p, got)
		}
	}
}
