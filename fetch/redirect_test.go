package fetch

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

func TestRequest_AllowHost(t *testing.T) {
	// b is reached as "localhost", a as "127.0.0.1": two hosts on loopback.
	b := newSite(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<p>b</p>") })
	_, bPort, _ := net.SplitHostPort(b.Listener.Addr().String())
	bURL := "http://LocalHost:" + bPort + "/landing"
	a := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/offsite":
			http.Redirect(w, r, bURL, http.StatusMovedPermanently)
		case "/onsite":
			http.Redirect(w, r, "/final?x=1", http.StatusFound)
		default:
			fmt.Fprint(w, "<p>a</p>")
		}
	})
	var mu sync.Mutex
	var asked []string
	onlyLoopbackIP := func(host string) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, host)
		return host == "127.0.0.1"
	}

	t.Run("offsite hop is not followed", func(t *testing.T) {
		asked = nil
		_, err := do(t, testFetcher(nil), Request{URL: a.URL + "/offsite", AllowHost: onlyLoopbackIP})
		var off *OffsiteRedirectError
		if !errors.Is(err, ErrOffsiteRedirect) || !errors.As(err, &off) || IsTransient(err) {
			t.Fatalf("Do = %v; want a permanent ErrOffsiteRedirect", err)
		}
		if off.URL != bURL {
			t.Errorf("OffsiteRedirectError.URL = %q, want %q", off.URL, bURL)
		}
		if b.hits.Load() != 0 || b.conns.Load() != 0 {
			t.Errorf("offsite server saw %d requests", b.hits.Load())
		}
		if len(asked) != 1 || asked[0] != "localhost" {
			t.Errorf("AllowHost was asked %q, want [localhost] (lowercase, no port)", asked)
		}
	})
	t.Run("onsite hop is followed; Page.URL is the final URL", func(t *testing.T) {
		p, err := do(t, testFetcher(nil), Request{URL: a.URL + "/onsite", AllowHost: onlyLoopbackIP})
		if err != nil || p.URL != a.URL+"/final?x=1" || string(p.Body) != "<p>a</p>" {
			t.Errorf("Do = %+v, %v; want page a at %s/final?x=1", p, err, a.URL)
		}
	})
	t.Run("nil AllowHost follows any host", func(t *testing.T) {
		p, err := do(t, testFetcher(nil), Request{URL: a.URL + "/offsite"})
		if err != nil || p.URL != bURL || string(p.Body) != "<p>b</p>" {
			t.Errorf("Do = %+v, %v; want page b at %s", p, err, bURL)
		}
	})
}

// TestRequest_OneHop: a OneHop request stops at the redirect and hands it
// back, its target absolute and without a fragment, its body unread;
// nothing past the first hop reaches any site, and the connection is
// kept for the next request.
func TestRequest_OneHop(t *testing.T) {
	a := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			w.Header().Set("Location", "sub/../next?x=1#frag")
			w.WriteHeader(http.StatusMovedPermanently)
			fmt.Fprint(w, "<p>moved</p>")
		case "/see-other":
			http.Redirect(w, r, "https://other.test/landing", http.StatusSeeOther)
		case "/no-location":
			w.WriteHeader(http.StatusFound)
		default:
			fmt.Fprint(w, "<p>a</p>")
		}
	})
	f := testFetcher(nil)
	for _, tc := range []struct {
		path, redirect string
		status         int
	}{
		{"/moved", a.URL + "/next?x=1", http.StatusMovedPermanently},
		{"/see-other", "https://other.test/landing", http.StatusSeeOther},
	} {
		p, err := do(t, f, Request{URL: a.URL + tc.path, OneHop: true, AllowHost: func(string) bool { return false }})
		if err != nil || p.Redirect != tc.redirect || p.Status != tc.status || len(p.Body) != 0 {
			t.Errorf("%s: Do = %+v, %v; want a %d redirect to %s, no body", tc.path, p, err, tc.status, tc.redirect)
		}
	}
	if hits := a.hits.Load(); hits != 2 {
		t.Errorf("the site saw %d requests, want the 2 first hops only", hits)
	}
	if conns := a.conns.Load(); conns != 1 {
		t.Errorf("%d connections for two requests, want one kept alive", conns)
	}
	if _, err := do(t, f, Request{URL: a.URL + "/no-location", OneHop: true}); err == nil {
		t.Errorf("a 302 without a Location came back as a page, want it failed as its status")
	}
	if f.MaxRedirects() != DefaultOptions().MaxRedirects {
		t.Errorf("MaxRedirects() = %d, want the option's %d", f.MaxRedirects(), DefaultOptions().MaxRedirects)
	}
}

// TestRequest_OneHopNoResend: a OneHop GET whose reused connection breaks
// after the site read it fails (a transient error, for the caller to
// retry through its rules) instead of being sent again by the Transport
// behind the caller's back; without OneHop the Transport resends it. The
// site sees no body and no Transfer-Encoding either way.
func TestRequest_OneHopNoResend(t *testing.T) {
	for _, tc := range []struct {
		oneHop bool
		want   int // requests the site sees for /reset
	}{{true, 1}, {false, 2}} {
		var resets atomic.Int64
		var mu sync.Mutex
		var bad []string
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			if r.TransferEncoding != nil || r.ContentLength > 0 {
				mu.Lock()
				bad = append(bad, fmt.Sprintf("%s: %v, %d", r.URL.Path, r.TransferEncoding, r.ContentLength))
				mu.Unlock()
			}
			if r.URL.Path == "/reset" && resets.Add(1) == 1 {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					_ = conn.(*net.TCPConn).SetLinger(0)
					conn.Close()
				}
				return
			}
			fmt.Fprint(w, "<p>ok</p>")
		})
		f := testFetcher(nil)
		if _, err := do(t, f, Request{URL: s.URL + "/warm", OneHop: tc.oneHop}); err != nil {
			t.Fatal(err)
		}
		_, err := do(t, f, Request{URL: s.URL + "/reset", OneHop: tc.oneHop}) // on the warm connection
		if got := resets.Load(); got != int64(tc.want) {
			t.Errorf("OneHop %v: the site saw /reset %d times, want %d", tc.oneHop, got, tc.want)
		}
		if tc.oneHop && (err == nil || !IsTransient(err)) {
			t.Errorf("OneHop: Do = %v, want a transient error", err)
		}
		if len(bad) > 0 {
			t.Errorf("requests with a body: %v", bad)
		}
	}
}
