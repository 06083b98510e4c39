package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestHosts runs the many-host benchmark small, with real processes: three
// sites of 20 detail pages (faults among them) behind 2 list pages, at
// 20 ms. Every page is stored once, the sites counted every request (the
// loop's hops among them), and the bound and the costs are filled in.
func TestHosts(t *testing.T) {
	bin := crawlerBinary(t)
	url, rdb := ownRedis(t)
	opts := DefaultHostsOptions()
	opts.Binary, opts.RedisURL, opts.Hosts, opts.Slaves = bin, url, []int{3}, []int{1}
	opts.DetailsPerHost, opts.ListPages, opts.Latency, opts.FaultEvery, opts.Timeout = 20, 2, 20*time.Millisecond, 10, 2*time.Minute
	rep, err := Hosts(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(rep.Runs))
	}
	r := rep.Runs[0]
	// IDs 1-60, faulty every 10th: 404s at 10 and 60; 503 once at 20, twice
	// at 30, a reset at 40 (a retry each); a stall at 50.
	if !r.Items.ExactlyOnce() || r.Items.Expected != 58 || r.Crawl.Pages != 58 {
		t.Errorf("items %+v, %d stored by the counters: want 58 pages, each once", r.Items, r.Crawl.Pages)
	}
	// At least robots.txt, 2 list pages and the loop's first hop on each
	// host, every detail page and the 4 retries.
	if least := 3*(1+2+1) + 60 + 4; r.Site.Requests() < least || r.Site.LoopHops() < 3 || len(r.Site.Hosts) != 3 {
		t.Errorf("the sites saw %d requests (%d to the loops) on %d hosts, want at least %d, 3 and 3",
			r.Site.Requests(), r.Site.LoopHops(), len(r.Site.Hosts), least)
	}
	loops := 0
	for _, n := range r.Items.LoopFailures {
		loops += n
	}
	if loops != 3 {
		t.Errorf("loop failures %v, want one per host", r.Items.LoopFailures)
	}
	busiest := r.Site.Busiest()
	if r.Bound() != time.Duration(busiest.Requests)*time.Second/hostsRate || r.OfBound() <= 0 ||
		busiest.PeakInFlight < 1 || busiest.PeakSecond < 1 || len(r.Site.PeakSecond().BusiestPaths) == 0 {
		t.Errorf("bound %v (%.2f of it) from %+v", r.Bound(), r.OfBound(), busiest)
	}
	if r.Crawl.Redis.Calls() == 0 || r.Crawl.Redis.CPU <= 0 || r.Crawl.CrawlerCPU() <= 0 || r.Crawl.Wall <= 0 {
		t.Errorf("nothing measured: %+v", r.Crawl)
	}
	if keys, err := rdb.Keys(context.Background(), "*bench-*").Result(); err != nil || len(keys) > 0 {
		t.Errorf("keys left behind: %v, %v", keys, err)
	}
	var md bytes.Buffer
	if err := WriteHosts(&md, FormatMarkdown, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| hosts | slaves | stored once |", "\n| 3 | 1 | 58/58 | ", "| evalsha |",
		"Redirect loop: ", "| every detail page stored exactly once, H = 3, 1 slave | all | 58/58 | yes |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown tables lack %q:\n%s", want, md.String())
		}
	}
}
