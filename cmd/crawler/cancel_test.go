package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
)

// cancelSite is a demo site whose detail pages, after the first few,
// answer as the test says: held on the wire until released, or refused
// with a Retry-After of an hour.
type cancelSite struct {
	site     *demosite.Site
	served   atomic.Int64 // detail requests answered normally
	free     int64        // how many are answered before the test's mode applies
	pause    bool         // refuse with 503 and Retry-After: 3600 instead of holding
	held     atomic.Int64 // detail requests holding the wire now
	arrived  atomic.Int64 // detail requests arrived after the first free ones
	released chan struct{}
	once     sync.Once
}

func (c *cancelSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/detail/") || c.served.Load() < c.free {
		if strings.HasPrefix(r.URL.Path, "/detail/") {
			c.served.Add(1)
		}
		c.site.ServeHTTP(w, r)
		return
	}
	c.arrived.Add(1)
	if c.pause {
		w.Header().Set("Retry-After", "3600")
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	c.held.Add(1)
	<-c.released
	c.held.Add(-1)
	c.site.ServeHTTP(w, r)
}

func (c *cancelSite) release() { c.once.Do(func() { close(c.released) }) }

// startCancelCrawl serves the site, starts a master and a slave and
// submits a job of 1,000 detail pages, two at a time at the site.
func startCancelCrawl(t *testing.T, c *cancelSite) clusterEnv {
	t.Helper()
	c.site, c.released = demosite.New(demosite.Options{Details: 1000, PerPage: 30, GoneEvery: -1, FlakyEvery: -1}), make(chan struct{})
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	t.Cleanup(c.release)
	env := newClusterEnv(t)
	env.startCluster(t, 1)
	job := demosite.Job{Name: "stopme", Seeds: []string{srv.URL + "/list/1"}, PerHostRPS: 1000,
		PerHostConcurrency: 2, Capacity: 100_000}.YAML() + "timeout: 5m\n"
	env.submitYAML(t, "stopme", job)
	return env
}

func (e clusterEnv) cancel(t *testing.T, job string) {
	t.Helper()
	if out, errOut, err := crawler(t, time.Minute, append([]string{"client", "cancel", "--job", job}, e.flags()...)...); err != nil {
		t.Fatalf("client cancel: %v %s %s", err, out, errOut)
	}
}

// TestClient_cancelStopsFetching: tasks a slave holds but has not sent are
// dropped at a cancel and counted cancelled; only the requests on the wire
// finish, and the site sees no request after them.
func TestClient_cancelStopsFetching(t *testing.T) {
	t.Parallel()
	c := &cancelSite{free: 20}
	env := startCancelCrawl(t, c)
	env.waitProgress(t, "stopme", "two requests held on the wire", func(client.Counters) bool { return c.held.Load() == 2 })
	env.cancel(t, "stopme")
	// Everything but the two on the wire is settled: the slave handed back
	// what it held, and the master dropped it.
	env.waitProgress(t, "stopme", "all but the two requests on the wire settled", func(n client.Counters) bool {
		return n.Discovered-n.Settled() == 2 && n.Cancelled > 0
	})
	c.release()
	st := env.wait(t, "stopme", time.Minute)
	n := st.Counters
	if st.CancelledAt == "" || n.Discovered != n.Settled() || n.Stored != c.free+2 {
		t.Errorf("after cancel: cancelled_at %q, stored %d (want %d), discovered %d, settled %d",
			st.CancelledAt, n.Stored, c.free+2, n.Discovered, n.Settled())
	}
	if got := c.arrived.Load(); got != 2 {
		t.Errorf("the site got %d detail requests after the first %d, want only the 2 on the wire at the cancel", got, c.free)
	}
}

// TestClient_cancelPausedHost: a cancel does not wait for a host paused by
// a Retry-After of an hour: the tasks waiting for it are dropped and the
// job is finished.
func TestClient_cancelPausedHost(t *testing.T) {
	t.Parallel()
	c := &cancelSite{free: 20, pause: true}
	env := startCancelCrawl(t, c)
	env.waitProgress(t, "stopme", "the host paused", func(client.Counters) bool { return c.arrived.Load() > 0 })
	env.cancel(t, "stopme")
	st := env.wait(t, "stopme", time.Minute)
	n := st.Counters
	if st.State != "finished" || n.Discovered != n.Settled() || n.Cancelled == 0 {
		t.Errorf("after cancel: state %s, cancelled %d, discovered %d, settled %d", st.State, n.Cancelled, n.Discovered, n.Settled())
	}
}
