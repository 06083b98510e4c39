package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

func do(t *testing.T, f *Fetcher, req Request) (*Page, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req.AllowPrivate = true
	return f.Do(ctx, req)
}

func TestRequest_userAgentAndHeaders(t *testing.T) {
	var got http.Header
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		fmt.Fprint(w, "<p>ok</p>")
	})
	t.Run("default names the crawler", func(t *testing.T) {
		if _, err := do(t, New(Options{}), Request{URL: s.URL}); err != nil {
			t.Fatal(err)
		}
		if ua := got.Get("User-Agent"); ua != "crawler/1.0 (+https://github.com/crawler-dev/crawler)" {
			t.Errorf("User-Agent = %q, want the crawler's", ua)
		}
		if ae := got.Get("Accept-Encoding"); ae != "gzip, deflate, br" {
			t.Errorf("Accept-Encoding = %q, want gzip, deflate, br", ae)
		}
	})
	t.Run("per request", func(t *testing.T) {
		req := Request{URL: s.URL, UserAgent: "job-agent/2",
			Headers: map[string]string{"Accept-Language": "zh-CN,zh;q=0.9", "x-custom": "a b"}}
		if _, err := do(t, testFetcher(func(o *Options) { o.UserAgent = "fetcher-agent/1" }), req); err != nil {
			t.Fatal(err)
		}
		if got.Get("User-Agent") != "job-agent/2" || got.Get("Accept-Language") != "zh-CN,zh;q=0.9" || got.Get("X-Custom") != "a b" {
			t.Errorf("headers = %v; want the request's user agent and headers", got)
		}
	})
	t.Run("headers replace the defaults", func(t *testing.T) {
		req := Request{URL: s.URL, Headers: map[string]string{"User-Agent": "from-headers", "Accept": "text/html"}}
		if _, err := do(t, testFetcher(nil), req); err != nil {
			t.Fatal(err)
		}
		if got.Get("User-Agent") != "from-headers" || got.Get("Accept") != "text/html" {
			t.Errorf("headers = %v; want User-Agent and Accept from Headers", got)
		}
	})
	for _, name := range []string{"Host", "host", "Content-Length", "Transfer-Encoding", "Connection", "Proxy-Authorization"} {
		t.Run("refuses "+name, func(t *testing.T) {
			before := s.hits.Load()
			_, err := do(t, testFetcher(nil), Request{URL: s.URL, Headers: map[string]string{name: "x"}})
			var field *cluster.FieldError
			if !errors.Is(err, ErrInvalidRequest) || !errors.As(err, &field) || field.Field != "Headers" ||
				!strings.Contains(err.Error(), http.CanonicalHeaderKey(name)) || IsTransient(err) {
				t.Errorf("Do with header %s = %v; want a permanent ErrInvalidRequest naming it", name, err)
			}
			if s.hits.Load() != before {
				t.Error("the request was sent anyway")
			}
		})
	}
	t.Run("refuses a value with a newline", func(t *testing.T) {
		err := ValidateHeaders(map[string]string{"X-A": "1\r\nHost: evil"})
		if err == nil || !strings.Contains(err.Error(), "X-A") {
			t.Errorf("ValidateHeaders = %v, want an error naming X-A", err)
		}
	})
}

func TestRequest_Validate(t *testing.T) {
	proxy, _ := url.Parse("ftp://user:hunter2pw@127.0.0.1:21")
	for _, tc := range []struct {
		name  string
		req   Request
		field string
	}{
		{"relative url", Request{URL: "/a"}, "URL"},
		{"ftp url", Request{URL: "ftp://example.com/"}, "URL"},
		{"no host", Request{URL: "http:///a"}, "URL"},
		{"negative size", Request{URL: "http://e.com", MaxBodyBytes: -1}, "MaxBodyBytes"},
		{"negative timeout", Request{URL: "http://e.com", Timeout: -time.Second}, "Timeout"},
		{"proxy scheme", Request{URL: "http://e.com", Proxy: proxy}, "Proxy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.Validate()
			var field *cluster.FieldError
			if !errors.Is(err, ErrInvalidRequest) || !errors.As(err, &field) || field.Field != tc.field {
				t.Fatalf("Validate = %v, want ErrInvalidRequest for field %s", err, tc.field)
			}
			if strings.Contains(err.Error(), "hunter2pw") || strings.Contains(err.Error(), "user") {
				t.Errorf("error %q shows the proxy's credentials", err)
			}
		})
	}
	if err := (Request{URL: "https://example.com/a?b=c"}).Validate(); err != nil {
		t.Errorf("Validate(good request) = %v", err)
	}
}

func TestOptions_Validate(t *testing.T) {
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
	if err := DefaultOptions().Validate(); err != nil {
		t.Errorf("DefaultOptions: %v", err)
	}
	var field *cluster.FieldError
	if err := (Options{MaxBodyBytes: -1}).Validate(); !errors.As(err, &field) || field.Field != "MaxBodyBytes" {
		t.Errorf("negative MaxBodyBytes: %v, want a FieldError naming it", err)
	}
}

func TestRequest_cookies(t *testing.T) {
	// /login sets a session cookie and redirects to /home, which needs it.
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1", Path: "/"})
			http.Redirect(w, r, "/home", http.StatusFound)
		default:
			c, err := r.Cookie("session")
			if err != nil {
				fmt.Fprint(w, "<p>anonymous</p>")
				return
			}
			fmt.Fprintf(w, "<p>session %s</p>", c.Value)
		}
	})
	f := testFetcher(nil)
	jar := NewJar()
	p, err := do(t, f, Request{URL: s.URL + "/login", Jar: jar})
	if err != nil || string(p.Body) != "<p>session s1</p>" {
		t.Fatalf("login with a jar = %q, %v; want the cookie kept across the redirect", body(p), err)
	}
	for _, tc := range []struct {
		name string
		jar  http.CookieJar
		want string
	}{
		{"same jar keeps the session", jar, "<p>session s1</p>"},
		{"another job's jar does not", NewJar(), "<p>anonymous</p>"},
		{"no jar sends none", nil, "<p>anonymous</p>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := do(t, f, Request{URL: s.URL + "/home", Jar: tc.jar})
			if err != nil || string(p.Body) != tc.want {
				t.Errorf("body = %q, %v; want %q", body(p), err, tc.want)
			}
		})
	}
	t.Run("no jar: the redirect loses the cookie", func(t *testing.T) {
		p, err := do(t, f, Request{URL: s.URL + "/login"})
		if err != nil || string(p.Body) != "<p>anonymous</p>" {
			t.Errorf("body = %q, %v; want anonymous", body(p), err)
		}
	})
}

func body(p *Page) string {
	if p == nil {
		return "<no page>"
	}
	return string(p.Body)
}

func TestRequest_limits(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		fmt.Fprint(w, strings.Repeat("x", 2000))
	})
	f := testFetcher(func(o *Options) { o.MaxBodyBytes = 1 << 20 })
	t.Run("MaxBodyBytes", func(t *testing.T) {
		_, err := do(t, f, Request{URL: s.URL, MaxBodyBytes: 1999})
		if !errors.Is(err, ErrTooLarge) || IsTransient(err) {
			t.Errorf("2000 bytes over a 1999-byte limit = %v, want permanent ErrTooLarge", err)
		}
		if p, err := do(t, f, Request{URL: s.URL, MaxBodyBytes: 2000}); err != nil || len(p.Body) != 2000 {
			t.Errorf("2000 bytes under a 2000-byte limit = %v", err)
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		_, err := do(t, f, Request{URL: s.URL + "/slow", Timeout: 50 * time.Millisecond})
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !IsTransient(err) {
			t.Errorf("slow page with a 50ms timeout = %v, want a transient timeout", err)
		}
	})
}
