package downloader

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/politeness"
)

// hostFactor is the rate factor the cluster keeps for the test site's host.
func (g *rig) hostFactor(t *testing.T) float64 {
	t.Helper()
	b, err := politeness.New(g.rdb, func() politeness.Options {
		o := politeness.DefaultOptions()
		o.Keys = g.keys
		return o
	}())
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.State(g.ctx, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return st.Factor
}

// TestDownloader_flakyHostKeepsRate: a site where one URL in twenty
// answers 503 once keeps its whole rate: a flaky URL is retried, the host
// is not slowed for it (its rate factor stays 1 throughout), and every
// page is fetched.
func TestDownloader_flakyHostKeepsRate(t *testing.T) {
	var mu sync.Mutex
	failed := map[string]bool{}
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := !failed[r.URL.Path]
		failed[r.URL.Path] = true
		mu.Unlock()
		if first && strings.HasPrefix(r.URL.Path, "/flaky") {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		html(w, "<h1>page</h1>")
	})
	g := newRig(t, fastOptions())
	j := g.job(func(sp *jobspec.Job) { sp.ObeyRobots, sp.PerHostRPS, sp.PerHostConcurrency = false, 200, 4 })
	const pages = 200
	for i := range pages {
		if i%20 == 0 { // one page in twenty answers 503 once
			g.submit(j, fmt.Sprintf("%s/flaky%d", s.URL, i))
			continue
		}
		g.submit(j, fmt.Sprintf("%s/p%d", s.URL, i))
	}
	lowest := 1.0
	done := 0
	for done < pages {
		for _, r := range g.wait(1, 60*time.Second) {
			if r.Kind != Fetched {
				t.Errorf("%s: %s (%v)", r.Request.URL, r.Kind, r.Err)
			}
			done++
		}
		lowest = min(lowest, g.hostFactor(t))
	}
	if lowest != 1 {
		t.Errorf("a site where 5%% of URLs answer 503 once was slowed to %.2f of its rate; want its whole rate", lowest)
	}
}

// TestDownloader_overloadedHostSlows: a site that answers 503 to most
// requests is slowed (its rate factor cut) while it does, and gets its
// rate back once it answers well again.
func TestDownloader_overloadedHostSlows(t *testing.T) {
	var mu sync.Mutex
	overloaded, n := true, 0
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		busy := overloaded && n%4 != 0 // three answers in four are 503
		mu.Unlock()
		if busy {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		html(w, "<h1>page</h1>")
	})
	opts := fastOptions()
	opts.RetryBase, opts.RetryMax = 10*time.Millisecond, 20*time.Millisecond
	g := newRig(t, opts)
	j := g.job(func(sp *jobspec.Job) {
		sp.ObeyRobots, sp.PerHostRPS, sp.PerHostConcurrency, sp.MaxRetries = false, 500, 4, 10
	})
	for i := range 100 {
		g.submit(j, fmt.Sprintf("%s/p%d", s.URL, i))
	}
	start := time.Now()
	testenv.Eventually(t, 10*time.Second, "the overloaded host is slowed", func() bool { return g.hostFactor(t) <= 0.5 })
	t.Logf("slowed %s after the first request", time.Since(start).Round(time.Millisecond))
	mu.Lock()
	overloaded = false
	mu.Unlock()
	g.wait(100, 60*time.Second)
	for i := range 100 { // good answers raise the rate back
		g.submit(j, fmt.Sprintf("%s/q%d", s.URL, i))
	}
	g.wait(100, 60*time.Second)
	testenv.Eventually(t, 10*time.Second, "the host gets its whole rate back", func() bool { return g.hostFactor(t) == 1 })
}
