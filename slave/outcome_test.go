package slave

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/statuspage/feed"
)

// outcomeSite serves a page for each outcome a task can have; /flaky
// answers 503 once, then the page.
func outcomeSite(t *testing.T) *httptest.Server {
	t.Helper()
	var flaky atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		html := func(body string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<html><body>" + body + "</body></html>"))
		}
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /private\n"))
		case "/ok", "/private/1":
			html("<h1>A page</h1>")
		case "/flaky":
			if flaky.Add(1) == 1 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			html("<h1>Flaky</h1>")
		case "/down":
			http.Error(w, "down", http.StatusServiceUnavailable)
		case "/untitled":
			html("<p>no title here</p>")
		case "/file.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = w.Write([]byte("%PDF-1.4"))
		case "/away":
			_, port, _ := strings.Cut(r.Host, ":")
			http.Redirect(w, r, "http://localhost:"+port+"/ok", http.StatusFound) // another host
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	return site
}

// TestSlave_outcomes: every task a slave takes is settled and
// acknowledged exactly once, counted by its outcome: stored (after a
// retry too, its retries counted), failed with the reason, status and
// kind of its record (not found, transient errors past max_retries, a
// required field missing, a task nobody can decode), or skipped by why
// (not HTML, disallowed by robots.txt, redirected off the allowed
// domains). Failures, not skips, reach the status page's feed.
func TestSlave_outcomes(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	site := outcomeSite(t)
	paths := []string{"/ok", "/flaky", "/missing", "/down", "/untitled", "/file.pdf", "/private/1", "/away"}
	jk := runningJobSpec(t, ctx, rdb, keys, "outcomes", site.URL, func(s *jobspec.Job) {
		s.MaxRetries = 1
		s.Fields = map[string]jobspec.FieldRule{"title": {CSS: "h1", Required: true}}
	}, paths...)
	rdb.RPush(ctx, jk.Queue(0), "{not a task")
	items, path := jsonlStoreAt(t)
	opts := DefaultOptions()
	opts.Concurrency = 4
	opts.Download.RetryBase = time.Millisecond
	opts.Download.RetryMax = time.Millisecond
	runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: items})
	settled(t, ctx, rdb, jk)

	stats := rdb.HGetAll(ctx, jk.Stats()).Val()
	for field, want := range map[string]string{
		cluster.StatStored: "2", cluster.StatFailed: "4", cluster.StatSkipped: "3",
		cluster.StatSkippedNotHTML: "1", cluster.StatSkippedRobots: "1", cluster.StatSkippedOffsite: "1",
		cluster.StatRetries: "2", cluster.StatDeadLetters: "",
	} {
		if stats[field] != want {
			t.Errorf("stats[%s] = %q, want %q (stats %v)", field, stats[field], want, stats)
		}
	}
	if stored, _ := items.Counts(); stored != 2 {
		t.Errorf("%d items stored, want /ok and /flaky", stored)
	}
	records := failureRecords(t, items, path)
	for _, tc := range []struct {
		url       string
		kind      string
		status    int
		transient bool
		reason    string
		pageKind  string // the job's kind of the page
	}{
		{url: site.URL + "/missing", kind: "detail", status: 404, reason: "404", pageKind: jobspec.KindDetail},
		{url: site.URL + "/down", kind: "detail", status: 503, transient: true, reason: "503", pageKind: jobspec.KindDetail},
		{url: site.URL + "/untitled", kind: extract.FailureMissingField, status: 200, reason: "title", pageKind: jobspec.KindDetail},
		{url: "{not a task", kind: "detail", reason: "decode task"},
		{url: site.URL + "/file.pdf", kind: "not_html", status: 200, reason: "not html", pageKind: jobspec.KindDetail},
		{url: site.URL + "/private/1", kind: "robots", reason: "robots.txt", pageKind: jobspec.KindDetail},
		{url: site.URL + "/away", kind: "offsite", reason: "allowed domains", pageKind: jobspec.KindDetail},
	} {
		f, ok := records[tc.url]
		switch {
		case !ok:
			t.Errorf("no failure record of %s (records %v)", tc.url, records)
		case f.Kind != tc.kind || f.Status != tc.status || f.Transient != tc.transient || !strings.Contains(f.Reason, tc.reason) ||
			f.Job != "outcomes" || (tc.pageKind != "" && f.PageKind != tc.pageKind):
			t.Errorf("record of %s = %+v; want kind %s, status %d, transient %v, a reason naming %q, page kind %q",
				tc.url, f, tc.kind, tc.status, tc.transient, tc.reason, tc.pageKind)
		}
	}
	if len(records) != 7 {
		t.Errorf("%d failure records, want 7", len(records))
	}
	fs, err := feed.ReadFailures(ctx, rdb, keys, []string{"outcomes"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"http_404": 1, "http_503": 1, extract.FailureMissingField: 1, "transport": 1}
	if got := fs["outcomes"].ByKind; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("feed counts %v, want %v: the four failures, no skips", got, want)
	}
}
