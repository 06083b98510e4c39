package downloader

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/jobspec"
)

// hopSite is a site of redirects: a chain that ends on a page, a loop, a
// hop to a path robots.txt disallows, hops off the job's domains and to
// another allowed host (other, which it names).
func hopSite(t *testing.T, other string) *site {
	return newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		case p == "/a":
			http.Redirect(w, r, "/b", http.StatusFound)
		case p == "/b":
			http.Redirect(w, r, "/c", http.StatusMovedPermanently)
		case strings.HasPrefix(p, "/loop/"):
			next := map[string]string{"/loop/1": "/loop/2", "/loop/2": "/loop/3", "/loop/3": "/loop/1"}[p]
			http.Redirect(w, r, next, http.StatusFound)
		case p == "/to-private":
			http.Redirect(w, r, "/private/x", http.StatusFound)
		case p == "/offsite":
			http.Redirect(w, r, "http://offsite.test/x", http.StatusFound)
		case p == "/to-other":
			http.Redirect(w, r, other+"/landing", http.StatusFound)
		default:
			html(w, "<h1>"+p+"</h1>")
		}
	})
}

// TestDownloader_RedirectHops: every hop of a redirect is a request of its
// own: it is spaced by its host's rate like any request, robots.txt too
// (the site sees /a, /b and /c an interval apart, not at once), a hop to another allowed
// host asks that host's robots.txt and goes at its rate, a hop to a path
// robots.txt disallows fails saying so and never reaches the site, a loop
// fails as a loop after its three requests, and a hop off the job's
// domains is not followed.
func TestDownloader_RedirectHops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	otherHits := make(chan string, 16)
	other := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits <- r.URL.Path
		html(w, "<h1>other</h1>")
	})}}
	other.Start()
	t.Cleanup(other.Close)
	s := hopSite(t, other.URL)
	g := newRig(t, fastOptions())
	const rps = 5
	j := g.job(func(sp *jobspec.Job) {
		sp.PerHostRPS, sp.AllowedDomains = rps, []string{"127.0.0.1", "127.0.0.2"}
	})
	for _, p := range []string{"/a", "/loop/1", "/to-private", "/offsite", "/to-other"} {
		g.submit(j, s.URL+p)
	}
	g.wait(5, 30*time.Second)
	res := func(p string) Result { g.mu.Lock(); defer g.mu.Unlock(); return g.got[s.URL+p] }

	if r := res("/a"); r.Kind != Fetched || r.Page.URL != s.URL+"/c" || r.Tries != 1 {
		t.Errorf("/a: %s, %v, tries %d; want /c fetched, hops not counted as tries", r.Kind, r.Err, r.Tries)
	}
	if r := res("/loop/1"); r.Kind != Failed || !errors.Is(r.Err, ErrRedirectLoop) || r.Transient {
		t.Errorf("/loop/1: %s, %v; want failed for good as a redirect loop", r.Kind, r.Err)
	} else if n := s.count("/loop/1") + s.count("/loop/2") + s.count("/loop/3"); n != 3 {
		t.Errorf("the loop took %d requests, want 3", n)
	}
	if r := res("/to-private"); r.Kind != Failed || !strings.Contains(fmt.Sprint(r.Err), "robots.txt disallows") {
		t.Errorf("/to-private: %s, %v; want failed, naming robots.txt", r.Kind, r.Err)
	}
	if n := s.count("/private/x"); n != 0 {
		t.Errorf("the disallowed target was fetched %d times", n)
	}
	if r := res("/offsite"); r.Kind != Offsite {
		t.Errorf("/offsite: %s, %v; want offsite", r.Kind, r.Err)
	}
	if r := res("/to-other"); r.Kind != Fetched || !strings.HasPrefix(r.Page.URL, other.URL) {
		t.Errorf("/to-other: %s, %v; want the other host's page", r.Kind, r.Err)
	}
	if got := []string{<-otherHits, <-otherHits}; got[0] != "/robots.txt" || got[1] != "/landing" {
		t.Errorf("the other host saw %v, want its robots.txt asked first, then /landing", got)
	}
	assertSpaced(t, s, time.Second/rps)
}

// assertSpaced fails if two requests the site saw, robots.txt included,
// came closer than the interval allows, less the lateness a booking may
// take (a quarter of it) and a little for the clocks.
func assertSpaced(t *testing.T, s *site, interval time.Duration) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var times []time.Time
	for _, at := range s.at {
		times = append(times, at...)
	}
	slices.SortFunc(times, time.Time.Compare)
	least := interval - interval/4 - 5*time.Millisecond
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < least {
			t.Errorf("two requests %v apart; the host's interval is %v", gap, interval)
		}
	}
}
