package statuspage

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
)

func TestHandler_Status(t *testing.T) {
	f := newFixture(t)
	busyCluster(f)
	srv := f.serve(f.source(nil), nil)
	code, hd, body := get(t, srv.URL()+"api/status")
	if code != http.StatusOK || hd.Get("Content-Type") != "application/json" || hd.Get("Cache-Control") != "no-store" {
		t.Fatalf("api/status: %d %v", code, hd)
	}
	snap := decodeSnapshot(t, body)
	checkJobs(t, snap.Jobs)
	// Stored, failed and duplicates over the running job only (news), not
	// the finished one's (older: 9, 1, 2) too: a card that sums every
	// job ever only grows.
	want := Totals{JobsRunning: 1, SlavesLive: 2, Queued: 16, InFlight: 6, Stored: 28, Failed: 2, Duplicates: 10}
	if snap.Totals != want {
		t.Errorf("totals %+v, want %+v", snap.Totals, want)
	}
	// The field names the page's script reads.
	for _, field := range []string{`"time":`, `"jobs_total":2`, `"lease_ms":60000`, `"stored_pct":35`, `"heartbeat_age_ms":`,
		`"usable":3`, `"breaker":{"open":false}`, `"in_flight":`} {
		if !strings.Contains(string(body), field) {
			t.Errorf("api/status lacks %s: %s", field, body)
		}
	}
	if strings.Contains(string(body), "s3cret") || strings.Contains(string(body), "hunter2") {
		t.Errorf("api/status shows proxy credentials: %s", body)
	}
}

func TestHandler_Page(t *testing.T) {
	f := newFixture(t)
	busyCluster(f)
	srv := f.serve(f.source(nil), nil)
	code, hd, body := get(t, srv.URL())
	page := string(body)
	if code != http.StatusOK || !strings.HasPrefix(hd.Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %v", code, hd)
	}
	if csp := hd.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	// Rendered on the server, so it reads without JavaScript.
	for _, want := range []string{
		`<tr data-job="news">`, `<span class="job">news</span>`, `<span class="state running">running</span>`,
		`<b class="pct">50.0%</b> <span class="done">40</span> / <span class="total">80</span>`,
		`<rect class="stored" x="0" width="35.00" height="1"/>`,
		`<span class="job">older</span>`, `<b class="pct">100.0%</b>`,
		`crawl-a.internal`, `crawl-b.internal`, `not live: work waits to be moved`,
		`<b>3</b> usable`, `http://***@127.0.0.1:3128`, `socks5://***@127.0.0.2:1080`, `http://127.0.0.3:8080`,
		`<noscript><meta http-equiv="refresh" content="5"></noscript>`, `<script src="static/app.js" defer></script>`,
		`<b id="t-running">1</b>`, `<b id="t-queued">16</b>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	for _, secret := range []string{"s3cret", "hunter2", "alice", "run-token"} {
		if strings.Contains(page, secret) {
			t.Errorf("page shows %q", secret)
		}
	}
}

func TestHandler_Job(t *testing.T) {
	f := newFixture(t)
	f.submit("news")
	f.crawl("news", step{slave: 3, routed: 8, stored: 2, failed: 2})
	srv := f.serve(f.source(nil), nil)
	code, _, body := get(t, srv.URL()+"api/jobs/news")
	var j Job
	if err := json.Unmarshal(body, &j); code != http.StatusOK || err != nil {
		t.Fatalf("api/jobs/news: %d %v %s", code, err, body)
	}
	if j.Job != "news" || j.Progress.Percent != 50 || j.Slaves["3"].Failed != 2 {
		t.Errorf("job %+v", j)
	}
	if code, _, body := get(t, srv.URL()+"api/jobs/nope"); code != http.StatusNotFound ||
		!strings.Contains(string(body), `"error"`) {
		t.Errorf("api/jobs/nope: %d %s", code, body)
	}
}

// A job name the API refuses can still be in Redis (written by hand, or an
// older version); hosts and proxy lines come from whoever runs a slave.
// None of it may become markup.
func TestHandler_EscapesHostileText(t *testing.T) {
	const (
		job  = `<script>alert("job")</script>`
		host = `"><img src=x onerror=alert(1)>`
	)
	f := newFixture(t)
	if err := f.rdb.ZAdd(f.ctx, f.keys.Jobs(), redisZ(time.Now().UnixMilli(), job)).Err(); err != nil {
		t.Fatal(err)
	}
	f.start(job)
	f.crawl(job, step{routed: 2, stored: 1})
	f.register(0, host, 8)
	srv := f.serve(f.source(nil), nil)

	_, _, body := get(t, srv.URL())
	page := string(body)
	for _, raw := range []string{"<script>alert", "<img src=x", `"><img`} {
		if strings.Contains(page, raw) {
			t.Errorf("page holds %q unescaped", raw)
		}
	}
	for _, escaped := range []string{
		`<span class="job">&lt;script&gt;alert(&#34;job&#34;)&lt;/script&gt;</span>`,
		`<tr data-job="&lt;script&gt;alert(&#34;job&#34;)&lt;/script&gt;">`,
		`<td>&#34;&gt;&lt;img src=x onerror=alert(1)&gt;</td>`,
	} {
		if !strings.Contains(page, escaped) {
			t.Errorf("page lacks %s", escaped)
		}
	}
	_, _, body = get(t, srv.URL()+"api/status")
	if strings.Contains(string(body), "<script>") || strings.Contains(string(body), "<img") {
		t.Errorf("api/status holds markup unescaped: %s", body)
	}
	snap := getSnapshot(t, srv.URL())
	if len(snap.Jobs) != 1 || snap.Jobs[0].Job != job || snap.Slaves[0].Host != host {
		t.Errorf("the JSON must still carry the text as it is: %+v", snap)
	}
}

func TestHandler_SourceDown(t *testing.T) {
	src := &stubSource{err: errDown}
	h, err := NewHandler(src, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/status", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"error":"redis: connection refused"`) {
		t.Errorf("api/status: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusServiceUnavailable ||
		!strings.Contains(rec.Body.String(), "<p>cannot read the cluster: redis: connection refused</p>") ||
		!strings.Contains(rec.Body.String(), "No jobs submitted yet.") {
		t.Errorf("page: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/jobs/news", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("api/jobs: %d %s", rec.Code, rec.Body)
	}
}

func TestHandler_SharesSnapshots(t *testing.T) {
	snap := &Snapshot{Jobs: []Job{NewJob(client.Status{Job: "a", State: cluster.StateRunning})}}
	for _, tc := range []struct {
		cacheFor time.Duration
		reads    int
	}{{time.Hour, 1}, {0, 3}} {
		src := &stubSource{snap: snap}
		opts := DefaultOptions()
		opts.Refresh, opts.CacheFor = time.Hour, tc.cacheFor
		h, err := NewHandler(src, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/", "/api/status", "/api/status"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d", path, rec.Code)
			}
		}
		if src.reads != tc.reads {
			t.Errorf("cache for %v: %d reads for 3 requests, want %d", tc.cacheFor, src.reads, tc.reads)
		}
	}
}

func TestHandler_Static(t *testing.T) {
	h, err := NewHandler(&stubSource{snap: &Snapshot{}}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for path, ctype := range map[string]string{"/static/app.js": "text/javascript", "/static/actions.js": "text/javascript", "/static/style.css": "text/css"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		etag := rec.Header().Get("ETag")
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), ctype) || etag == "" {
			t.Errorf("%s: %d %v", path, rec.Code, rec.Header())
		}
		if rec.Body.Len() > 16<<10 {
			t.Errorf("%s: %d bytes; keep the assets small", path, rec.Body.Len())
		}
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("If-None-Match", etag)
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotModified {
			t.Errorf("%s with its ETag: %d, want 304", path, rec.Code)
		}
	}
	for _, path := range []string{"/static/page.html", "/static/", "/nope", "/api/jobs/"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, rec.Code)
		}
	}
}

func TestOptions_Validate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatal(err)
	}
	for field, mut := range map[string]func(*Options){
		"Refresh":  func(o *Options) { o.Refresh = time.Millisecond },
		"CacheFor": func(o *Options) { o.CacheFor = 2 * o.Refresh },
		"Timeout":  func(o *Options) { o.Timeout = 0 },
		"Addr":     func(o *Options) { o.Addr = "" },
	} {
		o := DefaultOptions()
		mut(&o)
		_, err := New(&stubSource{}, o)
		var fe *cluster.FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
	if _, err := NewHandler(nil, DefaultOptions()); err == nil {
		t.Error("a nil source is accepted")
	}
}

func TestServer_Run(t *testing.T) {
	opts := DefaultOptions()
	opts.Addr = "127.0.0.1:0"
	srv, err := New(&stubSource{snap: &Snapshot{}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") || strings.HasSuffix(srv.Addr(), ":0") {
		t.Fatalf("url %s addr %s", srv.URL(), srv.Addr())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	if code, _, _ := get(t, srv.URL()); code != http.StatusOK {
		t.Errorf("page: %d", code)
	}
	// A connection opened ahead of time and never used, as browsers do:
	// it must not make stopping fail.
	idle, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
	if _, err := http.Get(srv.URL()); err == nil {
		t.Error("still serving after Run returned")
	}
	if err := srv.Close(); err != nil {
		t.Errorf("close after run: %v", err)
	}
}

// TestHandler_Cancelled: a job that client cancel stopped is shown as
// cancelled, on the page and in the API's label, though its state stays
// finished.
func TestHandler_Cancelled(t *testing.T) {
	f := newFixture(t)
	f.submit("stopped")
	f.rdb.HSet(f.ctx, f.keys.Job("stopped").State(), cluster.StateField, cluster.StateFinished,
		cluster.StateFinishedAt, time.Now().UTC().Format(time.RFC3339Nano), cluster.StateCancelledAt, time.Now().UTC().Format(time.RFC3339))
	f.submit("done")
	f.rdb.HSet(f.ctx, f.keys.Job("done").State(), cluster.StateField, cluster.StateFinished)
	srv := f.serve(f.source(nil), nil)
	_, _, body := get(t, srv.URL())
	if !strings.Contains(string(body), `<span class="state cancelled">cancelled</span>`) ||
		!strings.Contains(string(body), `<span class="state finished">finished</span>`) {
		t.Errorf("page does not show the cancelled job as cancelled, the finished one as finished:\n%s", body)
	}
	_, _, body = get(t, srv.URL()+"api/jobs/stopped")
	var j Job
	if err := json.Unmarshal(body, &j); err != nil || j.Label != "cancelled" || j.State != cluster.StateFinished || j.CancelledAt == "" {
		t.Errorf("api/jobs/stopped: %s, %v; want state finished, label cancelled, cancelled_at", body, err)
	}
}
