package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// site is an httptest server on 127.0.0.1 that counts the requests and the
// TCP connections it sees. Its answers are text/html unless the handler
// sets another Content-Type (or deletes it).
type site struct {
	*httptest.Server
	hits  atomic.Int64
	conns atomic.Int64
}

func newSite(t *testing.T, h http.HandlerFunc) *site {
	t.Helper()
	s := &site{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		h(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// testFetcher is a Fetcher with a 5s timeout.
func testFetcher(edit func(*Options)) *Fetcher {
	o := Options{Timeout: 5 * time.Second}
	if edit != nil {
		edit(&o)
	}
	return New(o)
}

// fetchPrivate makes one request for url, loopback allowed.
func fetchPrivate(t *testing.T, f *Fetcher, url string) (*Page, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return f.Do(ctx, Request{URL: url, AllowPrivate: true})
}

func mustEncode(t *testing.T, enc encoding.Encoding, s string) []byte {
	t.Helper()
	b, err := enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatalf("encode %q: %v", s, err)
	}
	return b
}

// fetchError asserts err is an *Error and returns it.
func fetchError(t *testing.T, err error) *Error {
	t.Helper()
	if err == nil {
		t.Fatal("Fetch succeeded, want an error")
	}
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *fetch.Error", err, err)
	}
	return fe
}

func TestFetcher_Do(t *testing.T) {
	t.Run("success", func(t *testing.T) {
		var ua string
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			ua = r.UserAgent()
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<html><body><h1>héllo</h1></body></html>")
		})
		p, err := fetchPrivate(t, testFetcher(func(o *Options) { o.UserAgent = "test-agent/1" }), s.URL+"/a")
		if err != nil {
			t.Fatalf("Do: %v", err)
		}
		if got, want := string(p.Body), "<html><body><h1>héllo</h1></body></html>"; got != want {
			t.Errorf("Body = %q, want %q", got, want)
		}
		if p.Status != 200 || p.Tries != 1 || p.URL != s.URL+"/a" || p.ContentType != "text/html; charset=utf-8" {
			t.Errorf("page = status %d, tries %d, url %q, type %q; want 200, 1, %q, text/html; charset=utf-8",
				p.Status, p.Tries, p.URL, p.ContentType, s.URL+"/a")
		}
		if ua != "test-agent/1" {
			t.Errorf("User-Agent = %q, want test-agent/1", ua)
		}
	})

	const zh = "<h1>城市经济新闻</h1>"
	const tw = "<h1>繁體中文新聞</h1>"
	for _, tc := range []struct {
		name        string
		contentType string
		page        string // UTF-8 source; served encoded with enc
		enc         encoding.Encoding
		want        string
	}{
		{"gbk via content-type", "text/html; charset=gbk", "<html><body>" + zh, simplifiedchinese.GBK, "<html><body>" + zh},
		{"gbk via meta", "text/html", `<html><head><meta charset="gbk"></head><body>` + zh,
			simplifiedchinese.GBK, `<html><head><meta charset="gbk"></head><body>` + zh},
		{"gb2312 via meta http-equiv", "text/html",
			`<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312"></head><body>` + zh,
			simplifiedchinese.GBK, `<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312"></head><body>` + zh},
		{"big5 via content-type", "text/html; charset=big5", "<html><body>" + tw, traditionalchinese.Big5, "<html><body>" + tw},
		{"big5 via meta", "text/html", `<html><head><meta charset="big5"></head><body>` + tw,
			traditionalchinese.Big5, `<html><head><meta charset="big5"></head><body>` + tw},
	} {
		t.Run("decodes/"+tc.name, func(t *testing.T) {
			raw := mustEncode(t, tc.enc, tc.page)
			if string(raw) == tc.page {
				t.Fatal("encoded page equals its UTF-8 form; the test would prove nothing")
			}
			s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				_, _ = w.Write(raw)
			})
			p, err := fetchPrivate(t, testFetcher(nil), s.URL)
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			if string(p.Body) != tc.want {
				t.Errorf("Body = %q, want %q", p.Body, tc.want)
			}
		})
	}

	t.Run("body over MaxBodyBytes", func(t *testing.T) {
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat("x", 1025)))
		})
		f := testFetcher(func(o *Options) { o.MaxBodyBytes = 1024 })
		_, err := fetchPrivate(t, f, s.URL)
		fe := fetchError(t, err)
		if !errors.Is(err, ErrTooLarge) || fe.Transient || IsTransient(err) {
			t.Errorf("error %v: Is(ErrTooLarge) = %v, transient = %v; want true, false", err, errors.Is(err, ErrTooLarge), fe.Transient)
		}
		if n := s.hits.Load(); n != 1 {
			t.Errorf("server saw %d requests, want 1 (too large is not retried)", n)
		}
	})

	t.Run("body of exactly MaxBodyBytes", func(t *testing.T) {
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat("x", 1024)))
		})
		p, err := fetchPrivate(t, testFetcher(func(o *Options) { o.MaxBodyBytes = 1024 }), s.URL)
		if err != nil || len(p.Body) != 1024 {
			t.Fatalf("Fetch = %v; want a 1024-byte body", err)
		}
	})

	// /r/N redirects to /r/N-1; /r/0 answers.
	redirects := func(w http.ResponseWriter, r *http.Request) {
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/r/%d", &n); err != nil {
			http.NotFound(w, r)
			return
		}
		if n == 0 {
			fmt.Fprint(w, "arrived")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), http.StatusFound)
	}
	t.Run("redirects up to MaxRedirects", func(t *testing.T) {
		s := newSite(t, redirects)
		p, err := fetchPrivate(t, testFetcher(func(o *Options) { o.MaxRedirects = 2 }), s.URL+"/r/2")
		if err != nil {
			t.Fatalf("Do: %v", err)
		}
		if string(p.Body) != "arrived" || p.URL != s.URL+"/r/0" {
			t.Errorf("page = %q at %q, want arrived at %s/r/0", p.Body, p.URL, s.URL)
		}
	})
	t.Run("too many redirects", func(t *testing.T) {
		s := newSite(t, redirects)
		_, err := fetchPrivate(t, testFetcher(func(o *Options) { o.MaxRedirects = 2 }), s.URL+"/r/3")
		fe := fetchError(t, err)
		if !errors.Is(err, ErrTooManyRedirects) || fe.Transient {
			t.Errorf("error %v: Is(ErrTooManyRedirects) = %v, transient = %v; want true, false", err, errors.Is(err, ErrTooManyRedirects), fe.Transient)
		}
		if n := s.hits.Load(); n != 3 {
			t.Errorf("server saw %d requests, want 3 (the first and 2 redirects, no retry)", n)
		}
	})

	t.Run("404 is permanent", func(t *testing.T) {
		s := newSite(t, http.NotFound)
		_, err := fetchPrivate(t, testFetcher(nil), s.URL+"/gone")
		fe := fetchError(t, err)
		if fe.Status != 404 || fe.Transient || IsTransient(err) || fe.URL != s.URL+"/gone" {
			t.Errorf("error = %+v, want status 404, not transient, url %s/gone", fe, s.URL)
		}
		if !strings.Contains(err.Error(), "404") {
			t.Errorf("message %q does not say 404", err)
		}
		if n := s.hits.Load(); n != 1 {
			t.Errorf("server saw %d requests, want exactly 1", n)
		}
	})

	t.Run("timeout is transient", func(t *testing.T) {
		release := make(chan struct{})
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		defer close(release) // before s.Close, which waits for handlers
		f := testFetcher(func(o *Options) { o.Timeout = 100 * time.Millisecond })
		_, err := fetchPrivate(t, f, s.URL)
		fe := fetchError(t, err)
		var ne net.Error
		if !fe.Transient || fe.Status != 0 || !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("error %v: transient %v, status %d, timeout %v; want true, 0, true", err, fe.Transient, fe.Status, ne != nil && ne.Timeout())
		}
		if n := s.hits.Load(); n != 1 {
			t.Errorf("server saw %d requests, want 1", n)
		}
	})

	t.Run("bad url", func(t *testing.T) {
		_, err := fetchPrivate(t, testFetcher(nil), "http://[::1")
		if fe := fetchError(t, err); fe.Transient {
			t.Errorf("error %v is transient, want permanent", err)
		}
	})
}

func TestFetcher_Do_ssrfGuard(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") })
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	f := testFetcher(nil)
	for _, tc := range []struct{ name, url string }{
		{"loopback address", s.URL + "/admin"},
		{"host name resolving to loopback", "http://localhost:" + port + "/admin"},
	} {
		t.Run("blocks "+tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			p, err := f.Do(ctx, Request{URL: tc.url})
			if !errors.Is(err, ErrBlockedAddress) {
				t.Fatalf("Fetch = %v, %v; want ErrBlockedAddress", p, err)
			}
			if fe := fetchError(t, err); fe.Transient {
				t.Errorf("blocked address is transient, want permanent (no retries)")
			}
			if h, c := s.hits.Load(), s.conns.Load(); h != 0 || c != 0 {
				t.Errorf("server saw %d requests on %d connections, want none", h, c)
			}
		})
	}
	t.Run("redirect to loopback is blocked", func(t *testing.T) {
		// The redirecting server is itself on loopback, so the guard must
		// stop the first hop already: no connection to either server.
		r := newSite(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, s.URL, http.StatusFound) })
		_, err := f.Do(context.Background(), Request{URL: r.URL})
		if !errors.Is(err, ErrBlockedAddress) || r.conns.Load() != 0 || s.conns.Load() != 0 {
			t.Errorf("Fetch = %v with %d+%d connections; want ErrBlockedAddress and none", err, r.conns.Load(), s.conns.Load())
		}
	})
	t.Run("AllowPrivate fetches loopback", func(t *testing.T) {
		for _, u := range []string{s.URL + "/admin", "http://localhost:" + port + "/admin"} {
			p, err := f.Do(context.Background(), Request{URL: u, AllowPrivate: true})
			if err != nil || string(p.Body) != "secret" {
				t.Errorf("Fetch(%s, AllowPrivate) = %v; want body secret", u, err)
			}
		}
	})
}

func TestIsPublic(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"8.8.8.8", true},
		{"93.184.216.34", true},
		{"2606:4700::1111", true},
		{"100.63.255.255", true}, // just below shared address space
		{"100.128.0.0", true},    // just above it
		{"172.32.0.1", true},     // just above 172.16/12
		{"127.0.0.1", false},
		{"127.8.9.10", false},
		{"10.0.0.1", false},
		{"10.255.255.255", false},
		{"192.168.1.1", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"100.64.0.1", false},
		{"100.127.255.255", false},
		{"169.254.169.254", false}, // cloud metadata
		{"0.0.0.0", false},
		{"224.0.0.1", false},
		{"::1", false},
		{"::", false},
		{"fe80::1", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		{"ff02::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.1.2.3", false},
		{"::ffff:100.64.0.1", false},
		{"::ffff:8.8.8.8", true},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			if got := isPublic(netip.MustParseAddr(tc.addr)); got != tc.want {
				t.Errorf("isPublic(%s) = %v, want %v", tc.addr, got, tc.want)
			}
		})
	}
}

func TestPublicOnly(t *testing.T) {
	for _, tc := range []struct {
		address string
		blocked bool
	}{
		{"127.0.0.1:80", true},
		{"[::1]:443", true},
		{"[fe80::1%eth0]:80", true},
		{"8.8.8.8:443", false},
	} {
		err := publicOnly("tcp", tc.address, nil)
		if got := errors.Is(err, ErrBlockedAddress); got != tc.blocked {
			t.Errorf("publicOnly(%s) = %v, blocked %v; want blocked %v", tc.address, err, got, tc.blocked)
		}
		if !tc.blocked && err != nil {
			t.Errorf("publicOnly(%s) = %v, want nil", tc.address, err)
		}
	}
	if err := publicOnly("tcp", "no-port", nil); err == nil {
		t.Error("publicOnly(no-port) = nil, want an error")
	}
}
