package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/demosite"
)

// TestSiteBound works the bound out by hand for a small site: at 0 ms the
// stalls bound it, at 100 ms the slots, and with one slot per level the
// walk.
func TestSiteBound(t *testing.T) {
	o := DefaultSiteOptions()
	o.Details, o.PerPage, o.FaultEvery, o.Stall = 200, 18, 20, time.Second
	site := func(l time.Duration) *demosite.Site { return demosite.New(o.siteOptions(l)) }
	// 200 details, step 13: 15 list pages, 6 levels; faults at 20..200:
	// gone 20, 120; busy once 40, 140; twice 60, 160; resets 80, 180;
	// stalls 100, 200. R = 1 + 15 + 200 + (2 + 4 + 2) = 224.
	b := siteBound(site(0), o, 0)
	if b.Requests != 224 || b.ListPages != 15 || b.Levels != 6 || b.Stalls != 2 || b.Stored != 198 {
		t.Fatalf("bound = %+v, want 224 requests, 15 list pages, 6 levels, 2 stalls, 198 to store", b)
	}
	if b.Wall != time.Second {
		t.Errorf("bound at 0 ms = %v, want the 1s stall", b.Wall)
	}
	// (224 × 100 ms + 2 s) / 16 = 1.525 s.
	if b := siteBound(site(100*time.Millisecond), o, 100*time.Millisecond); b.Wall != 1525*time.Millisecond {
		t.Errorf("bound at 100 ms = %v, want 1.525s", b.Wall)
	}
	o.PerHostConcurrency, o.FaultEvery = 1000, 0
	if b := siteBound(site(100*time.Millisecond), o, 100*time.Millisecond); b.Wall != 700*time.Millisecond {
		t.Errorf("bound at 100 ms with 1000 slots = %v, want 7 × 100ms (6 levels and a detail)", b.Wall)
	}
}

// TestSiteGoals reads goals off runs made up for it: a comparison where
// colly stored fewer pages is void, and ratios are taken round by round.
func TestSiteGoals(t *testing.T) {
	o := DefaultSiteOptions()
	o.Latencies, o.Rounds = []time.Duration{0}, 2
	run := func(name string, round int, stored int64, wall time.Duration) SiteRun {
		return SiteRun{Crawler: name, Round: round, Stored: stored, Expected: 100, Wall: wall,
			CrawlerCPU: time.Duration(stored) * time.Millisecond, RedisCalls: 4 * stored}
	}
	rep := SiteReport{Opts: o, Bounds: map[time.Duration]SiteBound{0: {Stored: 100, Wall: time.Second}}, Runs: []SiteRun{
		run(CrawlerCluster, 1, 100, time.Second), run(CrawlerColly, 1, 100, 2*time.Second),
		run(CrawlerCluster, 2, 100, time.Second), run(CrawlerColly, 2, 90, 1*time.Second),
	}}
	var got strings.Builder
	if err := WriteTables(&got, FormatText, SiteGoals(rep)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"10.00% off at worst  no",
		"1.11×–2.00×          no",
	} {
		if !strings.Contains(got.String(), want) {
			t.Errorf("goals lack %q:\n%s", want, got.String())
		}
	}
	if got := span("%.2f ms", 1.2, 1.5); got != "1.20–1.50 ms" {
		t.Errorf("span = %q, want 1.20–1.50 ms", got)
	}
}
