package statuspage

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/statuspage/browsertest"
	"github.com/crawler-dev/crawler/statuspage/feed"
	"github.com/crawler-dev/crawler/store"
)

// operatorCluster is busyCluster with what the processes publish for the
// operator: slave 0 (concurrency 8) holds 128 tasks, 100 of them parked
// behind a paused host; news has failures of three kinds; the busiest
// host's robots.txt was fetched; older finished after 75s.
func operatorCluster(f *fixture) {
	busyCluster(f)
	f.register(2, "crawl-c.internal", 8)
	fd := feed.New(f.rdb, f.keys)
	load := feed.SlaveLoad{Capacity: 32, MaxParked: 4096, Concurrency: 8, Held: 128, Parked: 100, Fetching: 8,
		Hosts: []feed.HostLoad{{Host: "slow.example", Origin: "https://slow.example", Held: 110},
			{Host: "fast.example", Origin: "https://fast.example", Held: 18}}}
	must(f.t, fd.PublishLoad(f.ctx, 2, load, time.Minute))
	for i, fl := range []store.Failure{
		{Kind: store.KindDetail, Status: 404, Reason: "http 404 Not Found"},
		{Kind: "extract_limit", Reason: "extract fields: extraction work limit reached: more than 4194304 units"},
		{Kind: store.KindDetail, Reason: "dial tcp 127.0.0.1:1: connection refused"},
		{Kind: store.KindDetail, Status: 404, Reason: "http 404 Not Found"},
	} {
		fl.Job, fl.URL, fl.FailedAt = "news", "https://slow.example/p/"+string(rune('a'+i)), time.Now().UTC()
		must(f.t, fd.Failure(f.ctx, fl))
	}
	must(f.t, f.rdb.HSet(f.ctx, f.keys.Robots("https://slow.example").File(), cluster.RobotsStatus, 200,
		cluster.RobotsFetchedAt, time.Now().Add(-3*time.Minute).UnixMilli()).Err())
	must(f.t, ledger.New(f.rdb, f.keys.Job("news")).AddSinkCounts(f.ctx, map[string]map[string]int64{
		"postgres": {cluster.SinkAccepted: 1200, cluster.SinkRetried: 96}, "s3": {cluster.SinkAccepted: 1200}}))
	started := time.Now().Add(-10 * time.Minute)
	must(f.t, f.rdb.HSet(f.ctx, f.keys.Job("older").State(), cluster.StateStartedAt, started.UTC().Format(time.RFC3339Nano),
		cluster.StateFinishedAt, started.Add(75*time.Second).UTC().Format(time.RFC3339Nano),
		cluster.StateBudgetReached, jobspec.BudgetMaxPages).Err())
	must(f.t, f.rdb.HSet(f.ctx, f.keys.Job("older").Stats(), cluster.StatSkippedMaxPages, 1234,
		cluster.StatHostsClosed, 2).Err())
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRedisSource_operatorView (issue 18): the snapshot carries what a
// slave published (its capacity 4 × 8, the tasks held for its fetchers
// apart from those parked), the busiest hosts with their budget and
// robots.txt, each job's failures by kind with the last reasons, and a
// finished job's duration.
func TestRedisSource_operatorView(t *testing.T) {
	f := newFixture(t)
	operatorCluster(f)
	srv := f.serve(f.source(nil), nil)
	snap := getSnapshot(t, srv.URL())
	if len(snap.Errors) > 0 {
		t.Fatalf("errors: %v", snap.Errors)
	}
	var s2 *Slave
	for i := range snap.Slaves {
		if snap.Slaves[i].ID == 2 {
			s2 = &snap.Slaves[i]
		}
	}
	if s2 == nil || !s2.Published || s2.Capacity != 32 || s2.ForFetchers() != 28 || s2.Parked != 100 || s2.Waiting != 20 {
		t.Errorf("slave 2 %+v: want capacity 32, 28 held for the fetchers, 100 parked, 20 waiting", s2)
	}
	if len(snap.Hosts) != 2 || snap.Hosts[0].Host != "slow.example" || snap.Hosts[0].Held != 110 ||
		!strings.HasPrefix(snap.Hosts[0].Robots, "200 fetched 3m") || snap.Hosts[0].RateFactor != 1 ||
		snap.Hosts[1].Robots != "not fetched" {
		t.Errorf("hosts %+v: want slow.example (110 held, robots 200 fetched 3m ago, full rate), then fast.example", snap.Hosts)
	}
	jobs := map[string]Job{}
	for _, j := range snap.Jobs {
		jobs[j.Job] = j
	}
	news := jobs["news"]
	if news.Failures == nil || news.Failures.ByKind["http_404"] != 2 || news.Failures.ByKind["extract_limit"] != 1 ||
		news.Failures.ByKind["transport"] != 1 || len(news.Failures.Recent) != 4 {
		t.Errorf("news failures %+v", news.Failures)
	}
	if d := jobs["older"].DurationMS; d != 75_000 {
		t.Errorf("older took %dms, want 75000", d)
	}
	if d := news.DurationMS; d < 90_000 {
		t.Errorf("news running for %dms, want at least the 90s since it started", d)
	}
	if pg := news.Sinks["postgres"]; len(news.Sinks) != 2 || pg.Accepted != 1200 || pg.Retried != 96 || news.Sinks["s3"].Accepted != 1200 {
		t.Errorf("news sinks %+v: want postgres 1200 accepted and 96 retried, s3 1200 accepted", news.Sinks)
	}
	_, _, page := get(t, srv.URL())
	if !strings.Contains(string(page), `<tr data-job="news" data-sink="postgres">`) || !strings.Contains(string(page), `data-sink="s3"`) {
		t.Errorf("the page as served has no sink rows for news")
	}
}

// TestServer_history: the server samples the cluster on its own, whether
// a page is open or not, and serves the samples; a slave's line counts
// its tasks held as well as queued.
func TestServer_history(t *testing.T) {
	f := newFixture(t)
	busyCluster(f)
	srv := f.serve(f.source(nil), func(o *Options) { o.HistoryEvery = 100 * time.Millisecond })
	var h History
	testenv.Eventually(t, 30*time.Second, "3 samples or more in the history", func() bool {
		_, _, body := get(t, srv.URL()+"api/history")
		h = History{}
		return json.Unmarshal(body, &h) == nil && len(h.Samples) >= 3
	})
	last := h.Samples[len(h.Samples)-1]
	if h.EveryMS != 100 || last.Slaves["0"] != 7+3 || last.Held != 6 || last.Queued != 16 {
		t.Errorf("history every %dms, last sample %+v: want slave 0 at 7 queued + 3 held, 6 held and 16 queued in all", h.EveryMS, last)
	}
	for i := 1; i < len(h.Samples); i++ {
		if h.Samples[i].T <= h.Samples[i-1].T {
			t.Errorf("samples out of order: %d then %d", h.Samples[i-1].T, h.Samples[i].T)
		}
	}
}

// TestHistory_keep: samples older than keep before the newest (15s - 10s)
// are dropped, and a repeated snapshot is not sampled twice.
func TestHistory_keep(t *testing.T) {
	h := &history{every: time.Second, keep: 10 * time.Second}
	for _, ts := range []int64{0, 4000, 4000, 9000, 12000, 15000} {
		h.add(Sample{T: ts})
	}
	var got []int64
	for _, s := range h.get().Samples {
		got = append(got, s.T)
	}
	if want := []int64{9000, 12000, 15000}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
}

// TestBrowser_operatorView (issue 18) loads the page in headless Chromium
// once the server has sampled the cluster, with polling so rare that the
// page reads the status once: the charts are drawn from the server's
// history at once, the slaves table shows the published capacity, the
// failures and busiest hosts tables are filled in, the finished job shows
// its duration. The screenshot is decoded and checked, and the page made
// no script errors.
func TestBrowser_operatorView(t *testing.T) {
	tab := browser(t)
	errs := console(t, tab)
	f := newFixture(t)
	operatorCluster(f)
	srv := f.serve(f.source(nil), func(o *Options) { o.Refresh, o.HistoryEvery = time.Hour, 100*time.Millisecond })
	testenv.Eventually(t, 30*time.Second, "the server keeping 5 samples", func() bool {
		_, _, body := get(t, srv.URL()+"api/history")
		var h History
		return json.Unmarshal(body, &h) == nil && len(h.Samples) >= 5
	})
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL()), chromedp.WaitVisible(`#hosts tr[data-host="slow.example"]`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "a queue chart drawn from the server's history",
		`document.querySelector('#chart-queue polyline')?.getAttribute('points').split(' ').length >= 4`)
	for what, cond := range map[string]string{
		"slave 2 at 28 of 32 with 100 parked": `document.querySelector('tr[data-slave="2"] .ptext').textContent === '28 / 32 +100 parked'`,
		"news's failures by kind":             `document.querySelector('#failures tr[data-job="news"]').textContent.includes('2 http_404')`,
		"news's last reasons":                 `document.querySelectorAll('#failures tr[data-job="news"] .reasons li').length === 4`,
		"slow.example's robots.txt":           `document.querySelector('#hosts tr[data-host="slow.example"]').textContent.includes('200 fetched 3m ago')`,
		"older's duration":                    `document.querySelector('#jobs tr[data-job="older"] .sub').textContent.includes('took 1m')`,
		"older's budget": `/ · max_pages budget reached · 1\D?234 links past a budget · 2 hosts at max_pages_per_host$/.test(` +
			`document.querySelector('#jobs tr[data-job="older"] .sub').textContent)`,
		"news's postgres sink, retries marked": `(() => { const c = document.querySelector('#sinks tr[data-job="news"][data-sink="postgres"]').children; ` +
			`return c[2].textContent.replace(/\D/g, '') === '1200' && c[3].textContent === '96' && c[3].classList.contains('bad') && c[4].textContent === '0'; })()`,
		"news's s3 sink":              `document.querySelector('#sinks tr[data-job="news"][data-sink="s3"]').children[2].textContent.replace(/\D/g, '') === '1200'`,
		"a chart span of whole units": `/last \d+(s|m|h)$/.test(document.getElementById('c-queue-max').textContent)`,
	} {
		if !eval[bool](t, tab, cond) {
			t.Errorf("the page does not show %s (%s)", what, cond)
		}
	}
	checkScreenshot(t, screenshotPath(t, tab, "statuspage-operator.png"))
	if e := errs(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

func screenshotPath(t *testing.T, tab context.Context, name string) string {
	t.Helper()
	return browsertest.Screenshot(t, tab, name)
}

// checkScreenshot decodes the PNG and checks it is a page, not a blank: a
// full page's size and many colours.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	r := img.Bounds()
	colours := map[[3]uint32]bool{}
	for y := r.Min.Y; y < r.Max.Y; y += 4 {
		for x := r.Min.X; x < r.Max.X; x += 4 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			colours[[3]uint32{cr >> 8, cg >> 8, cb >> 8}] = true
		}
	}
	if r.Dx() < 600 || r.Dy() < 800 || len(colours) < 20 {
		t.Errorf("screenshot %s is %dx%d with %d colours: not the whole page drawn", path, r.Dx(), r.Dy(), len(colours))
	}
}
