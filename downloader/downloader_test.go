package downloader

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/politeness"
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
// everything. One answering 500 disallows the site for its error window
// (RFC 9309): the site's page waits, without a try charged to it, and is
// fetched once robots.txt, fetched again after the window, answers.
func TestDownloader_robotsStatus(t *testing.T) {
	allowAll := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		html(w, "<h1>page</h1>")
	})
	var robotsCalls atomic.Int32
	blip := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if robotsCalls.Add(1) == 1 {
				http.Error(w, "down", http.StatusInternalServerError)
				return
			}
			_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
			return
		}
		html(w, "<h1>page</h1>")
	})
	g := newRig(t, fastOptions()) // max_retries 2 from 20ms: over long before the window
	g.d.robotsOpts.ErrorTTL = time.Second
	j := g.job(nil)
	g.submit(j, allowAll.URL+"/a")
	g.submit(j, blip.URL+"/b")
	g.wait(2, 30*time.Second)
	if r := g.got[allowAll.URL+"/a"]; r.Kind != Fetched {
		t.Errorf("the 404 site's page: %s (%v), want fetched", r.Kind, r.Err)
	}
	if r := g.got[blip.URL+"/b"]; r.Kind != Fetched || r.Tries != 1 {
		t.Errorf("the page of a site whose robots.txt failed once: %s after %d tries (%v); want fetched, 1 try",
			r.Kind, r.Tries, r.Err)
	}
	if n := blip.count("/robots.txt"); n != 2 {
		t.Errorf("robots.txt requested %d times, want twice: once failing, once after its error window", n)
	}
	if n := blip.count("/b"); n != 1 {
		t.Errorf("the page was requested %d times, want once", n)
	}
}

// TestDownloader_robotsDown: a page whose robots.txt stays unavailable
// waits, re-fetching it after each error window, and fails once it has
// waited MaxRobotsWait, transient, saying why; it is never requested.
func TestDownloader_robotsDown(t *testing.T) {
	down := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		html(w, "<h1>page</h1>")
	})
	opts := fastOptions()
	opts.MaxRobotsWait = 1500 * time.Millisecond
	g := newRig(t, opts)
	g.d.robotsOpts.ErrorTTL = 300 * time.Millisecond
	g.submit(g.job(nil), down.URL+"/b")
	r := g.wait(1, 30*time.Second)[0]
	if r.Kind != Failed || !r.Transient || !strings.Contains(fmt.Sprint(r.Err), "robots.txt") ||
		!strings.Contains(fmt.Sprint(r.Err), "unavailable for 1.5s") {
		t.Errorf("the page: %s, transient %v, %v; want a transient failure saying robots.txt was unavailable for 1.5s", r.Kind, r.Transient, r.Err)
	}
	if n := down.count("/b"); n != 0 {
		t.Errorf("the page of a site whose robots.txt fails was fetched %d times", n)
	}
	if n := down.count("/robots.txt"); n < 3 {
		t.Errorf("robots.txt requested %d times in 1.5s with an error window of 300ms, want it asked again after each", n)
	}
}

// TestDownloader_robotsUnreachable: a site that does not answer at all
// (its port refuses connections) is most likely down: waiting for its
// robots.txt counts as the page's tries, so the page fails within its
// retries, transient and saying so, instead of waiting out
// MaxRobotsWait (a crawler run of a dead site would hang for an hour).
func TestDownloader_robotsUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there any more: connections are refused
	opts := fastOptions()
	opts.MaxRobotsWait = time.Hour
	g := newRig(t, opts)
	g.submit(g.job(nil), dead+"/page")
	r := g.wait(1, 30*time.Second)[0]
	if r.Kind != Failed || !r.Transient || !strings.Contains(fmt.Sprint(r.Err), "did not answer for robots.txt") {
		t.Errorf("the page of a dead site: %s, transient %v, %v; want a transient failure naming robots.txt", r.Kind, r.Transient, r.Err)
	}
	if want := g.job(nil).Spec.MaxRetries + 1; r.Tries != want {
		t.Errorf("the page failed after %d tries, want %d (max_retries + 1)", r.Tries, want)
	}
}

// TestDownloader_robotsLease: while another process holds the lease to
// fetch a robots.txt, the page waits for it (not charged a try) and is
// fetched once the file can be had, however long that takes.
func TestDownloader_robotsLease(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
			return
		}
		html(w, "<h1>page</h1>")
	})
	g := newRig(t, fastOptions())
	g.d.robotsOpts.Wait = 50 * time.Millisecond // how long Check waits for the other process
	now, err := g.rdb.Time(g.ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	lease := g.keys.Robots(s.URL).Lease() // s.URL is its robots.txt's origin
	if err := g.rdb.Set(g.ctx, lease, fmt.Sprintf("other@%d", now.Add(1500*time.Millisecond).UnixMilli()), 2*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	g.submit(g.job(nil), s.URL+"/page")
	r := g.wait(1, 30*time.Second)[0]
	if r.Kind != Fetched || r.Tries != 1 {
		t.Errorf("the page: %s after %d tries (%v); want fetched, 1 try, once the other process's lease lapsed", r.Kind, r.Tries, r.Err)
	}
	if n := s.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt requested %d times, want once", n)
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
	j := g.job(func(s *jobspec.Job) { s.PerHostRPS = 0 })
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
	j := g.job(func(s *jobspec.Job) {
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
// to a host, and a slow host does not hold back another: with three
// workers and a slow host capped at two, the other host's pages all go
// through the third worker while the slow host's are still waiting.
func TestDownloader_hostCap(t *testing.T) {
	slow := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		html(w, "<h1>slow</h1>")
	})
	fast := newSite(t, func(w http.ResponseWriter, r *http.Request) { html(w, "<h1>fast</h1>") })
	opts := fastOptions()
	opts.Workers = 3
	g := newRig(t, opts)
	j := g.job(func(s *jobspec.Job) { s.PerHostConcurrency, s.ObeyRobots = 2, false })
	for i := 0; i < 12; i++ {
		g.submit(j, fmt.Sprintf("%s/p%d", slow.URL, i))
	}
	for i := 0; i < 12; i++ {
		g.submit(j, fmt.Sprintf("%s/p%d", elsewhere(fast), i)) // another host: localhost
	}
	var slowDone, fastDone int
	for _, r := range g.wait(24, 60*time.Second) {
		if r.Kind != Fetched {
			t.Errorf("%s: %s (%v)", r.Request.URL, r.Kind, r.Err)
		}
		if strings.HasPrefix(r.Request.URL, slow.URL) {
			slowDone++
			continue
		}
		fastDone++
		if slowDone == 12 {
			t.Errorf("a fast host's page finished after all of the slow host's: the slow host held it back")
		}
	}
	if slow.peak > 2 {
		t.Errorf("%d requests in flight at once, per_host_concurrency is 2", slow.peak)
	}
	if slow.peak < 2 {
		t.Errorf("never 2 requests in flight (peak %d): the cap was not used", slow.peak)
	}
	if fastDone != 12 {
		t.Errorf("%d of the fast host's pages fetched, want 12", fastDone)
	}
}

// TestDownloader_longRequest: a request that runs longer than the host
// lease keeps its place in the host's cap (its lease is renewed while it
// runs), so per_host_concurrency holds for requests of any length.
func TestDownloader_longRequest(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Second)
		html(w, "<h1>slow</h1>")
	})
	opts := fastOptions()
	opts.HostLeaseTTL = 250 * time.Millisecond
	g := newRig(t, opts)
	j := g.job(func(s *jobspec.Job) { s.PerHostConcurrency, s.ObeyRobots = 1, false })
	for i := 0; i < 3; i++ {
		g.submit(j, fmt.Sprintf("%s/p%d", s.URL, i))
	}
	for _, r := range g.wait(3, 60*time.Second) {
		if r.Kind != Fetched {
			t.Errorf("%s: %s (%v)", r.Request.URL, r.Kind, r.Err)
		}
	}
	if s.peak != 1 {
		t.Errorf("%d requests in flight at once to a host capped at 1 (requests of 1s, host lease 250ms)", s.peak)
	}
}

// TestDownloader_cancel: when Run ends, requests still waiting end
// Cancelled, each once.
func TestDownloader_cancel(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) { html(w, "<h1>x</h1>") })
	g := newRig(t, fastOptions())
	j := g.job(func(sp *jobspec.Job) { sp.PerHostRPS, sp.ObeyRobots = 0.2, false })
	for i := 0; i < 5; i++ {
		g.submit(j, fmt.Sprintf("%s/p%d", s.URL, i))
	}
	g.wait(1, 20*time.Second) // the first goes at once; the rest wait 5s each
	ctx, cancel := context.WithCancel(context.Background())
	req := &Request{URL: s.URL + "/mine", Job: j}
	g.fetch(ctx, req)
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

// TestRetryAfterCap: the longest Retry-After a page waits out is no longer
// than the longest pause its host's budget takes, so a page never waits
// for a site that its host's other pages have long been sent to again.
func TestRetryAfterCap(t *testing.T) {
	if maxPause := politeness.DefaultOptions().MaxPause; fetch.MaxRetryAfter > maxPause {
		t.Errorf("fetch.MaxRetryAfter %s is longer than the host pause cap %s", fetch.MaxRetryAfter, maxPause)
	}
}

// TestDownloader_robotsRefusedAddress: a site on an address the job may
// not reach (loopback without allow_private_networks) fails its page at
// once, permanent, with the cause in the error: not after the robots.txt
// tries, saying the site did not answer.
func TestDownloader_robotsRefusedAddress(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, _ *http.Request) { html(w, "<h1>x</h1>") })
	opts := fastOptions()
	opts.MaxRobotsWait = time.Hour
	g := newRig(t, opts)
	g.submit(g.job(func(s *jobspec.Job) { s.AllowPrivateNetworks = false }), s.URL+"/page")
	r := g.wait(1, 30*time.Second)[0]
	if r.Kind != Failed || r.Transient || !strings.Contains(fmt.Sprint(r.Err), "set allow_private_networks") {
		t.Errorf("the page of a loopback site: %s, transient %v, %v; want a permanent failure naming allow_private_networks", r.Kind, r.Transient, r.Err)
	}
	if r.Tries > 1 {
		t.Errorf("the page failed after %d tries, want 1: no retry can reach a refused address", r.Tries)
	}
	if n := s.count("/robots.txt") + s.count("/page"); n != 0 {
		t.Errorf("the site was asked %d times, want none", n)
	}
}

// TestDownloader_robotsRedirectLoop: a robots.txt that redirects past the
// redirects followed (here, in a loop) is unavailable, and RFC 9309
// §2.3.1.2 lets a crawler take that as no robots.txt: the page is fetched,
// the site not failed as unreachable.
func TestDownloader_robotsRedirectLoop(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Redirect(w, r, "/robots.txt", http.StatusFound)
			return
		}
		html(w, "<h1>x</h1>")
	})
	g := newRig(t, fastOptions())
	g.submit(g.job(nil), s.URL+"/page")
	r := g.wait(1, 30*time.Second)[0]
	if r.Kind != Fetched {
		t.Errorf("the page of a site whose robots.txt redirects in a loop: %s, %v; want fetched", r.Kind, r.Err)
	}
}
