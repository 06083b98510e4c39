package main

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/demosite"
)

// requestLog is a site's own record of the requests it answered: when each
// started and how many were in flight at most.
type requestLog struct {
	mu       sync.Mutex
	starts   []time.Time
	robots   int
	loops    int // requests to the redirect loop's hops (wrapAll)
	inflight int
	peak     int
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		if r.URL.Path == "/robots.txt" {
			l.robots++
			l.mu.Unlock()
			h.ServeHTTP(w, r)
			return
		}
		l.starts = append(l.starts, time.Now())
		l.inflight++
		l.peak = max(l.peak, l.inflight)
		l.mu.Unlock()
		defer func() { l.mu.Lock(); l.inflight--; l.mu.Unlock() }()
		h.ServeHTTP(w, r)
	})
}

// busiestSecond is the most requests that started within any one second.
func (l *requestLog) busiestSecond() int {
	l.mu.Lock()
	ts := append([]time.Time(nil), l.starts...)
	l.mu.Unlock()
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	most, lo := 0, 0
	for hi := range ts {
		for ts[hi].Sub(ts[lo]) >= time.Second {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

// TestPoliteness_Cluster (issue 9): a master and three slaves, as real
// processes, crawl one host with per_host_rps 20 and per_host_concurrency
// 4. The site's own log never shows more than the rate plus its burst in
// any one-second window, nor more than 4 requests in flight, and the
// cluster fetched robots.txt once.
func TestPoliteness_Cluster(t *testing.T) {
	env := newClusterEnv(t)
	site := demosite.New(demosite.Options{Details: 150, PerPage: 30, Overlap: 5, Delay: 150 * time.Millisecond})
	log := &requestLog{}
	srv := httptest.NewServer(log.wrap(site))
	t.Cleanup(srv.Close)
	job := strings.Replace(demosite.JobYAML("polite", srv.URL), "per_host_rps: 1000", "per_host_rps: 20", 1)
	job = strings.Replace(job, "per_host_concurrency: 32", "per_host_concurrency: 4", 1)
	if !strings.Contains(job, "per_host_rps: 20") || !strings.Contains(job, "per_host_concurrency: 4") {
		t.Fatalf("could not set the budget in the job file:\n%s", job)
	}
	env.startCluster(t, 3)
	env.submitYAML(t, "polite", job)
	st := env.wait(t, "polite", 3*time.Minute)
	checkCrawl(t, site, srv.URL, st, env.results(t, "polite"), env.failedURLs(t, "polite"))

	burst := 2 // a tenth of a second's worth of the rate
	most := log.busiestSecond()
	if most > 20+burst {
		t.Errorf("the site saw %d requests in one second; per_host_rps is 20 (burst %d)", most, burst)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if log.peak > 4 {
		t.Errorf("the site saw %d requests in flight at once; per_host_concurrency is 4", log.peak)
	}
	if log.peak < 3 {
		t.Errorf("never more than %d request in flight: the cap was not used", log.peak)
	}
	if log.robots != 1 {
		t.Errorf("robots.txt was fetched %d times; the cluster shares one copy", log.robots)
	}
	t.Logf("%d requests, busiest second %d, peak in flight %d", len(log.starts), most, log.peak)
}

// TestPoliteness_ClusterOnABusyMachine (issue 28): the same cluster on a
// machine whose cores two busy loops keep loaded, on a site with faults
// (retries) and a redirect loop linked from every list page, at
// per_host_rps 100 and per_host_concurrency 4. Every request the site
// sees counts, robots.txt and each redirect hop included: never more
// than the rate plus its burst in any second, never more than 4 at once.
func TestPoliteness_ClusterOnABusyMachine(t *testing.T) {
	env := newClusterEnv(t)
	startBusyLoops(t, 2)
	site := demosite.New(demosite.Options{Details: 300, PerPage: 30, Overlap: 5, Delay: 20 * time.Millisecond,
		FaultEvery: 10, Stall: 300 * time.Millisecond, RedirectLoop: true, GoneEvery: -1, FlakyEvery: -1})
	log := &requestLog{}
	srv := httptest.NewServer(log.wrapAll(site))
	t.Cleanup(srv.Close)
	job := demosite.Job{Name: "busy", Seeds: []string{srv.URL + "/list/1"}, PerHostRPS: 100, PerHostConcurrency: 4,
		Capacity: 100_000}.YAML()
	env.startCluster(t, 3)
	env.submitYAML(t, "busy", job)
	st := env.wait(t, "busy", 3*time.Minute)
	if want, c := site.Tally(), st.Counters; c.Stored != int64(want.Stored) || c.Failed != int64(want.Failed) {
		t.Errorf("stored %d, failed %d; want %d and %d (the gone pages and the loop)", c.Stored, c.Failed, want.Stored, want.Failed)
	}

	const burst = 10 // a tenth of a second's worth of the rate
	most := log.busiestSecond()
	if most > 100+burst {
		t.Errorf("the site saw %d requests in one second; per_host_rps is 100 (burst %d)", most, burst)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if log.peak > 4 {
		t.Errorf("the site saw %d requests in flight at once; per_host_concurrency is 4", log.peak)
	}
	if log.loops != 3 {
		t.Errorf("the redirect loop took %d requests, want its 3 hops once", log.loops)
	}
	t.Logf("%d requests, busiest second %d, peak in flight %d", len(log.starts), most, log.peak)
}

// wrapAll is wrap with every request counted, robots.txt included, and
// the hops of the site's redirect loop counted apart. A request the site
// answers by cutting its connection ends when the connection is cut, not
// when the handler returns after it: the client may be sending its next
// request by then.
func (l *requestLog) wrapAll(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.starts = append(l.starts, time.Now())
		if strings.HasPrefix(r.URL.Path, "/loop/") {
			l.loops++
		}
		l.inflight++
		l.peak = max(l.peak, l.inflight)
		l.mu.Unlock()
		lw := &leavingWriter{ResponseWriter: w, leave: func() { l.mu.Lock(); l.inflight--; l.mu.Unlock() }}
		defer lw.done()
		h.ServeHTTP(lw, r)
	})
}

// leavingWriter calls leave once: when its request's connection is
// hijacked (to be cut) or when the handler returns.
type leavingWriter struct {
	http.ResponseWriter
	leave func()
	once  sync.Once
}

func (w *leavingWriter) done() { w.once.Do(w.leave) }

// Hijack counts the request out, then hands the connection over.
func (w *leavingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.done()
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// startBusyLoops keeps n shells spinning until the test ends: a machine
// whose cores are busy with another program.
func startBusyLoops(t *testing.T, n int) {
	t.Helper()
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatalf("start a busy loop: %v", err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
}
