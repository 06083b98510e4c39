package downloader

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/fetch"
)

// TestDownloader_robots: a disallowed page is not requested and ends
// Disallowed; an allowed one is fetched; robots.txt is fetched once.
func TestDownloader_robots(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /private\nAllow: /private/ok\n"))
			return
		}
		html(w, "<h1>page</h1>")
	})
	g := newRig(t, fastOptions())
	j := g.job(nil)
	for _, p := range []string{"/private/a", "/private/ok", "/public"} {
		g.submit(j, s.URL+p)
	}
	g.wait(3, 30*time.Second)
	if k := g.got[s.URL+"/private/a"].Kind; k != Disallowed {
		t.Errorf("/private/a: %s, want robots", k)
	}
	for _, p := range []string{"/private/ok", "/public"} {
		if r := g.got[s.URL+p]; r.Kind != Fetched || r.Page == nil {
			t.Errorf("%s: %s (%v), want fetched", p, r.Kind, r.Err)
		}
	}
	if n := s.count("/private/a"); n != 0 {
		t.Errorf("the disallowed page was requested %d times", n)
	}
	if n := s.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt requested %d times, want once", n)
	}
}

// TestDownloader_robotsStatus: a robots.txt answering 404 allows
// everything; one answering 500 disallows the site for a while (RFC 9309):
// its page is never fetched, waits its retries, and then fails, transient,
// saying why, instead of waiting for ever on a broken site.
func TestDownloader_robotsStatus(t *testing.T) {
	allowAll := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		html(w, "<h1>page</h1>")
	})
	broken := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		html(w, "<h1>page</h1>")
	})
	g := newRig(t, fastOptions())
	j := g.job(nil)
	g.submit(j, allowAll.URL+"/a")
	g.submit(j, broken.URL+"/b")
	g.wait(2, 30*time.Second)
	if r := g.got[allowAll.URL+"/a"]; r.Kind != Fetched {
		t.Errorf("the 404 site's page: %s (%v), want fetched", r.Kind, r.Err)
	}
	r := g.got[broken.URL+"/b"]
	if r.Kind != Failed || !r.Transient || !strings.Contains(fmt.Sprint(r.Err), "robots.txt") {
		t.Errorf("the 500 site's page: %s, transient %v, %v; want a transient failure naming robots.txt", r.Kind, r.Transient, r.Err)
	}
	if n := broken.count("/b"); n != 0 {
		t.Errorf("the page of a site whose robots.txt fails was fetched %d times", n)
	}
	if n := broken.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt requested %d times within its error TTL, want 1", n)
	}
}

// TestDownloader_crawlDelay: Crawl-delay spaces the host's requests.
func TestDownloader_crawlDelay(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nCrawl-delay: 1\n"))
			return
		}
		html(w, "<h1>page</h1>")
	})
	g := newRig(t, fastOptions())
	j := g.job(func(s *cluster.JobSpec) { s.PerHostRPS = 0 })
	for i := 0; i < 3; i++ {
		g.submit(j, fmt.Sprintf("%s/p%d", s.URL, i))
	}
	g.wait(3, 30*time.Second)
	var times []time.Time
	for i := 0; i < 3; i++ {
		times = append(times, s.at[fmt.Sprintf("/p%d", i)]...)
	}
	sortTimes(times)
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < 900*time.Millisecond {
			t.Errorf("requests %d and %d were %s apart; Crawl-delay 1 asks for 1s", i-1, i, gap)
		}
	}
}

// TestDownloader_retryAfter: a 503 with Retry-After is tried again no
// sooner than the site asked, and then fetched.
func TestDownloader_retryAfter(t *testing.T) {
	var calls atomic.Int32
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		html(w, "<h1>page</h1>")
	})
	g := newRig(t, fastOptions())
	g.submit(g.job(nil), s.URL+"/page")
	r := g.wait(1, 30*time.Second)[0]
	if r.Kind != Fetched || r.Tries != 2 {
		t.Fatalf("result %s after %d tries (%v), want fetched after 2", r.Kind, r.Tries, r.Err)
	}
	at := s.at["/page"]
	if gap := at[1].Sub(at[0]); gap < 900*time.Millisecond {
		t.Errorf("retried %s after the 503; Retry-After asked for 1s", gap)
	}
}

// TestDownloader_kinds: not HTML, gzip, offsite redirects, retries that run
// out, and the job's User-Agent and headers as the server sees them.
func TestDownloader_kinds(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("<h1>zipped</h1>"))
	_ = zw.Close()
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/doc.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = w.Write([]byte("%PDF-1.4 ..."))
		case "/gzip":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(gz.Bytes())
		case "/away":
			http.Redirect(w, r, "http://elsewhere.test/x", http.StatusFound)
		case "/down":
			http.Error(w, "down", http.StatusBadGateway)
		default:
			html(w, "<h1>page</h1>")
		}
	})
	g := newRig(t, fastOptions())
	j := g.job(func(s *cluster.JobSpec) {
		s.UserAgent = "testbot/2.0 (+https://example.test/bot)"
		s.Headers = map[string]string{"Accept-Language": "zh-CN,zh;q=0.9"}
	})
	for _, p := range []string{"/doc.pdf", "/gzip", "/away", "/down"} {
		g.submit(j, s.URL+p)
	}
	g.wait(4, 30*time.Second)
	want := map[string]Kind{"/doc.pdf": NotHTML, "/gzip": Fetched, "/away": Offsite, "/down": Failed}
	for p, k := range want {
		if got := g.got[s.URL+p]; got.Kind != k {
			t.Errorf("%s: %s (%v), want %s", p, got.Kind, got.Err, k)
		}
	}
	if body := string(g.got[s.URL+"/gzip"].Page.Body); !strings.Contains(body, "zipped") {
		t.Errorf("gzip page body = %q", body)
	}
	down := g.got[s.URL+"/down"]
	if down.Tries != 3 || !down.Transient || s.count("/down") != 3 {
		t.Errorf("/down: %d tries (server saw %d), transient %v; want 3 (max_retries 2) and transient", down.Tries, s.count("/down"), down.Transient)
	}
	if !errors.Is(g.got[s.URL+"/away"].Err, fetch.ErrOffsiteRedirect) {
		t.Errorf("/away error %v, want ErrOffsiteRedirect", g.got[s.URL+"/away"].Err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, ua := range s.agents {
		if ua != "testbot/2.0 (+https://example.test/bot)" {
			t.Errorf("request %d User-Agent %q", i, ua)
		}
		if h := s.headers[i].Get("Accept-Language"); h != "zh-CN,zh;q=0.9" {
			t.Errorf("request %d Accept-Language %q", i, h)
		}
	}
}

// TestDownloader_hostCap: per_host_concurrency caps the requests in flight
// to a host, and a slow host does not hold back another.
func TestDownloader_hostCap(t *testing.T) {
	slow := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			time.Sleep(100 * time.Millisecond)
		}
		html(w, "<h1>slow</h1>")
	})
	g := newRig(t, fastOptions())
	j := g.job(func(s *cluster.JobSpec) { s.PerHostConcurrency, s.ObeyRobots = 2, false })
	for i := 0; i < 12; i++ {
		g.submit(j, fmt.Sprintf("%s/p%d", slow.URL, i))
	}
	g.wait(12, 60*time.Second)
	if slow.peak > 2 {
		t.Errorf("%d requests in flight at once, per_host_concurrency is 2", slow.peak)
	}
	if slow.peak < 2 {
		t.Errorf("never 2 requests in flight (peak %d): the cap was not used", slow.peak)
	}
}

// TestDownloader_cancel: when Run ends, requests still waiting end
// Cancelled, each once.
func TestDownloader_cancel(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) { html(w, "<h1>x</h1>") })
	g := newRig(t, fastOptions())
	j := g.job(func(sp *cluster.JobSpec) { sp.PerHostRPS, sp.ObeyRobots = 0.2, false })
	for i := 0; i < 5; i++ {
		g.submit(j, fmt.Sprintf("%s/p%d", s.URL, i))
	}
	g.wait(1, 20*time.Second) // the first goes at once; the rest wait 5s each
	ctx, cancel := context.WithCancel(context.Background())
	req := &Request{Ctx: ctx, URL: s.URL + "/mine", Job: j, Done: func(_ context.Context, r Result) { g.done <- r }}
	g.d.Submit(req)
	cancel()
	r := g.wait(1, 20*time.Second)[0]
	if r.Kind != Cancelled || r.Request != req {
		t.Errorf("a request whose context ended: %s for %s, want cancelled", r.Kind, r.Request.URL)
	}
}

func sortTimes(ts []time.Time) {
	for i := 1; i < len(ts); i++ {
		for k := i; k > 0 && ts[k].Before(ts[k-1]); k-- {
			ts[k], ts[k-1] = ts[k-1], ts[k]
		}
	}
}
