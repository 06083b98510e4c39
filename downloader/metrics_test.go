package downloader

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/metrics"
)

// TestDownloader_politenessMetrics: requests the host's budget holds back
// are counted in crawler_politeness_waits_total and _wait_seconds under
// their reason; requests that went at once are not counted as waits.
func TestDownloader_politenessMetrics(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) { html(w, "<h1>page</h1>") })
	reg, err := metrics.New(metrics.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := newMeteredRig(t, reg)
	j := g.job(func(s *jobspec.Job) { s.PerHostConcurrency, s.ObeyRobots = 2, false })
	// Six at once wait for the host's two slots; then six one after the
	// other go at once.
	const pages = 6
	for i := 0; i < pages; i++ {
		g.submit(j, fmt.Sprintf("%s/p%d", s.URL, i))
	}
	g.wait(pages, time.Minute)
	for i := 0; i < pages; i++ {
		g.submit(j, fmt.Sprintf("%s/q%d", s.URL, i))
		g.wait(1, time.Minute)
	}

	families, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	waits, observed := map[string]float64{}, map[string]uint64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			reason := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					reason = l.GetValue()
				}
			}
			switch f.GetName() {
			case "crawler_politeness_waits_total":
				waits[reason] += m.GetCounter().GetValue()
			case "crawler_politeness_wait_seconds":
				observed[reason] += m.GetHistogram().GetSampleCount()
			}
		}
	}
	// Requests held back waited for a slot (full); none of those that
	// went at once counts as a wait.
	held := waits["full"]
	if held < pages-2 || float64(observed["full"]) != held {
		t.Errorf("waits counted %v, observed %v; want the requests held back counted in both", waits, observed)
	}
	for _, reason := range []string{"", "other"} {
		if _, ok := waits[reason]; ok {
			t.Errorf("requests that went at once counted as waits: %v", waits)
		}
	}
}

// TestDownloader_robotsFetchMetrics: each robots.txt download is counted
// in crawler_robots_fetches_total by its status class.
func TestDownloader_robotsFetchMetrics(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		html(w, "<h1>page</h1>")
	})
	reg, err := metrics.New(metrics.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := newMeteredRig(t, reg)
	g.submit(g.job(nil), s.URL+"/page")
	g.wait(1, time.Minute)
	got := map[string]float64{}
	families, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "crawler_robots_fetches_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "status" {
					got[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	if got["4xx"] != 1 || len(got) != 1 {
		t.Errorf("robots.txt fetches counted %v, want one 4xx", got)
	}
}

// newMeteredRig is a rig whose Downloader records into reg.
func newMeteredRig(t *testing.T, reg *metrics.Registry) *rig {
	t.Helper()
	rdb, keys := testenv.Redis(t)
	d, err := New(fastOptions(), Deps{Redis: rdb, Keys: keys, Fetcher: fetch.New(fetch.DefaultOptions()),
		Metrics: reg.Node(metrics.RoleSlave, 0)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); _ = d.Run(ctx) }()
	t.Cleanup(func() { stop(); <-stopped })
	return &rig{t: t, ctx: ctx, rdb: rdb, keys: keys, d: d, got: map[string]Result{}, done: make(chan fetched, 100)}
}
