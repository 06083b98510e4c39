package fetch

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
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
		_, err := do(t, testFetcher(nil), Request{URL: a.URL + "/offsite", AllowHost: onlyLoopbackIP, MaxRetries: 3})
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
