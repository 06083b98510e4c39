package fetch

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// targets are an http and an https site on loopback.
func targets(t *testing.T) (plain, secure *httptest.Server) {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/gone":
			http.NotFound(w, r)
		case "/busy":
			w.Header().Set("Retry-After", "4")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			fmt.Fprintf(w, "<p>%s via proxy</p>", r.URL.Path)
		}
	})
	plain, secure = httptest.NewServer(h), httptest.NewTLSServer(h)
	t.Cleanup(plain.Close)
	t.Cleanup(secure.Close)
	return plain, secure
}

func TestFetcher_proxies(t *testing.T) {
	plain, secure := targets(t)
	f := tlsFetcher(secure, nil)
	open := newHTTPProxy(t, "", "")
	authed := newHTTPProxy(t, proxyUser, proxyPass)
	tlsProxy := newHTTPSProxy(t)
	socks := newSOCKSProxy(t, "", "")
	socksAuthed := newSOCKSProxy(t, proxyUser, proxyPass)
	creds := url.UserPassword(proxyUser, proxyPass)

	for _, tc := range []struct {
		name  string
		proxy *url.URL
		seen  func() int64 // requests the proxy handled
	}{
		{"http proxy", open.URL(nil), func() int64 { return int64(len(open.requests())) }},
		{"http proxy with credentials", authed.URL(creds), func() int64 { return int64(len(authed.requests())) }},
		{"https proxy", tlsProxy.URL(nil), func() int64 { return int64(len(tlsProxy.requests())) }},
		{"socks5", socks.URL(nil), socks.connects.Load},
		{"socks5 with credentials", socksAuthed.URL(creds), socksAuthed.connects.Load},
	} {
		for _, target := range []*httptest.Server{plain, secure} {
			t.Run(tc.name+"/"+target.URL[:strings.Index(target.URL, ":")], func(t *testing.T) {
				before := tc.seen()
				p, err := do(t, f, Request{URL: target.URL + "/page", Proxy: tc.proxy})
				if err != nil || string(p.Body) != "<p>/page via proxy</p>" || p.URL != target.URL+"/page" {
					t.Fatalf("Do through %s = %+v, %v; want the page", tc.name, p, err)
				}
				if tc.seen() == before {
					t.Errorf("the proxy saw nothing: the request went direct")
				}
			})
		}
	}

	t.Run("the site's status is the site's", func(t *testing.T) {
		for _, target := range []*httptest.Server{plain, secure} {
			_, err := do(t, f, Request{URL: target.URL + "/gone", Proxy: authed.URL(creds)})
			fe := fetchError(t, err)
			if fe.Status != 404 || fe.ProxyFault || fe.Transient || IsProxyFault(err) {
				t.Errorf("404 through a proxy = %+v; want status 404, permanent, not the proxy's", fe)
			}
			_, err = do(t, f, Request{URL: target.URL + "/busy", Proxy: socks.URL(nil)})
			fe = fetchError(t, err)
			if fe.Status != 503 || fe.ProxyFault || !fe.Transient || fe.RetryAfter != 4*time.Second {
				t.Errorf("503 through a proxy = %+v; want status 503, transient, Retry-After 4s, not the proxy's", fe)
			}
		}
	})
	t.Run("a bad site certificate is the site's", func(t *testing.T) {
		other := httptest.NewTLSServer(http.NotFoundHandler()) // its own certificate, not trusted
		defer other.Close()
		for _, proxy := range []*url.URL{open.URL(nil), tlsProxy.URL(nil), socks.URL(nil)} {
			_, err := do(t, f, Request{URL: other.URL, Proxy: proxy})
			if fe := fetchError(t, err); fe.ProxyFault || fe.Transient {
				t.Errorf("untrusted certificate through a %s proxy = %+v; want permanent, not the proxy's", proxy.Scheme, fe)
			}
		}
	})
}

func TestFetcher_proxyFaults(t *testing.T) {
	plain, secure := targets(t)
	f := tlsFetcher(secure, nil)
	creds := url.UserPassword(proxyUser, proxyPass)
	wrong := url.UserPassword(proxyUser, proxyPass+"-wrong")
	refused := refusedAddr(t)
	authed := newHTTPProxy(t, proxyUser, proxyPass)
	socksAuthed := newSOCKSProxy(t, proxyUser, proxyPass)
	garbage := newRawServer(t, func(_ int64, c net.Conn) {
		_, _ = bufio.NewReader(c).Peek(1)
		fmt.Fprint(c, "220 welcome to my FTP server\r\n\x00\x01\x02\r\n\r\n")
	})
	tlsProxy := newHTTPSProxy(t)
	tlsProxy.Config.ErrorLog = log.New(io.Discard, "", 0) // it will see failed handshakes
	hangsUp := newRawServer(t, func(_ int64, c net.Conn) { readRequest(c) })
	// echo answers with the credentials it got as its status line: they
	// must not reach the error message.
	echo := newRawServer(t, func(_ int64, c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		auth := strings.TrimPrefix(req.Header.Get("Proxy-Authorization"), "Basic ")
		plainAuth, _ := base64.StdEncoding.DecodeString(auth)
		fmt.Fprintf(c, "%s|%s\r\n\r\n", plainAuth, auth)
	})
	refuser := newRawServer(t, func(_ int64, c net.Conn) {
		readRequest(c)
		fmt.Fprint(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
	})
	rawURL := func(scheme string, s *rawServer) *url.URL {
		return &url.URL{Scheme: scheme, Host: s.ln.Addr().String(), User: creds}
	}

	for _, tc := range []struct {
		name   string
		target string
		proxy  *url.URL
	}{
		{"http proxy refuses connections", plain.URL, &url.URL{Scheme: "http", Host: refused, User: creds}},
		{"http proxy refuses connections (CONNECT)", secure.URL, &url.URL{Scheme: "http", Host: refused, User: creds}},
		{"socks5 proxy refuses connections", plain.URL, &url.URL{Scheme: "socks5", Host: refused, User: creds}},
		{"407 to a request", plain.URL, authed.URL(wrong)},
		{"407 to a CONNECT", secure.URL, authed.URL(wrong)},
		{"407 without credentials", secure.URL, authed.URL(nil)},
		{"socks5 refuses the credentials", plain.URL, socksAuthed.URL(wrong)},
		{"garbage to a request", plain.URL, rawURL("http", garbage)},
		{"garbage to a CONNECT", secure.URL, rawURL("http", garbage)},
		{"garbage to socks5", secure.URL, rawURL("socks5", garbage)},
		{"garbage to an https proxy", secure.URL, rawURL("https", garbage)},
		{"closed without an answer", plain.URL, rawURL("http", hangsUp)},
		{"closed without an answer (CONNECT)", secure.URL, rawURL("http", hangsUp)},
		{"credentials echoed to a request", plain.URL, rawURL("http", echo)},
		{"credentials echoed to a CONNECT", secure.URL, rawURL("http", echo)},
		{"CONNECT refused", secure.URL, rawURL("http", refuser)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := do(t, f, Request{URL: tc.target, Proxy: tc.proxy})
			fe := fetchError(t, err)
			if !fe.ProxyFault || !fe.Transient || !errors.Is(err, ErrProxy) || !IsProxyFault(err) || fe.Status != 0 {
				t.Errorf("Do = %v (%+v); want a transient proxy fault with no site status", err, fe)
			}
			noSecrets(t, err)
			t.Log(err)
		})
	}
	t.Run("https proxy with an untrusted certificate", func(t *testing.T) {
		untrusting := testFetcher(nil) // the system's roots: not httptest's
		for _, target := range []string{plain.URL, secure.URL} {
			_, err := do(t, untrusting, Request{URL: target, Proxy: tlsProxy.URL(creds)})
			if fe := fetchError(t, err); !fe.ProxyFault || !fe.Transient {
				t.Errorf("Do(%s) = %v; want a transient proxy fault", target, err)
			}
			noSecrets(t, err)
		}
	})
}

func TestFetcher_proxyGuard(t *testing.T) {
	plain, _ := targets(t)
	p := newHTTPProxy(t, "", "")
	f := testFetcher(nil)
	t.Run("private target without allow_private_networks", func(t *testing.T) {
		_, err := f.Do(context.Background(), Request{URL: plain.URL, Proxy: p.URL(nil)})
		if !errors.Is(err, ErrBlockedAddress) || IsProxyFault(err) || IsTransient(err) {
			t.Errorf("Do = %v; want a permanent ErrBlockedAddress, not the proxy's", err)
		}
		if p.newConns.Load() != 0 {
			t.Errorf("the proxy got %d connections, want none", p.newConns.Load())
		}
	})
	// A canned proxy that answers everything itself and never dials out:
	// if the guard failed, nothing would leave the machine.
	canned := newRawServer(t, func(_ int64, c net.Conn) {
		readRequest(c)
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 10\r\n\r\n<p>meta</p>")
	})
	for _, target := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://100.100.100.200/", "https://169.254.169.254/"} {
		t.Run("metadata "+target, func(t *testing.T) {
			before := canned.conns.Load()
			proxy := &url.URL{Scheme: "http", Host: canned.ln.Addr().String()}
			_, err := f.Do(context.Background(), Request{URL: target, AllowPrivate: true, Proxy: proxy})
			if !errors.Is(err, ErrBlockedAddress) || IsProxyFault(err) {
				t.Errorf("Do = %v; want ErrBlockedAddress", err)
			}
			if n := canned.conns.Load() - before; n != 0 {
				t.Errorf("the proxy got %d connections, want none", n)
			}
		})
	}
	t.Run("a proxy on loopback is fine for a job without private networks", func(t *testing.T) {
		// Proxies are the operator's: only the target is guarded. The
		// target here is on loopback, so allow_private_networks is on.
		if _, err := f.Do(context.Background(), Request{URL: plain.URL, AllowPrivate: true, Proxy: p.URL(nil)}); err != nil {
			t.Errorf("Do = %v", err)
		}
	})
}

func TestFetcher_proxyPools(t *testing.T) {
	plain, secure := targets(t)
	t.Run("a connection carries one proxy identity", func(t *testing.T) {
		f := tlsFetcher(secure, nil)
		p := newHTTPProxy(t, "", "") // accepts any credentials, records them
		users := []*url.Userinfo{url.UserPassword("alice", "pw-a"), url.UserPassword("bob", "pw-b")}
		for i := range 8 {
			if _, err := do(t, f, Request{URL: plain.URL + "/x", Proxy: p.URL(users[i%2])}); err != nil {
				t.Fatal(err)
			}
		}
		authByConn, identities := map[string]map[string]bool{}, map[string]bool{}
		for _, r := range p.requests() {
			identities[r.auth] = true
			if authByConn[r.conn] == nil {
				authByConn[r.conn] = map[string]bool{}
			}
			authByConn[r.conn][r.auth] = true
		}
		for conn, auths := range authByConn {
			if len(auths) != 1 {
				t.Errorf("connection %s carried %d identities, want 1", conn, len(auths))
			}
		}
		if len(identities) != 2 {
			t.Errorf("the proxy saw %d identities, want 2", len(identities))
		}
		if len(authByConn) != 2 {
			t.Errorf("8 requests as 2 identities used %d connections, want 2 (kept alive, one per identity)", len(authByConn))
		}
	})
	t.Run("each proxy gets its own requests", func(t *testing.T) {
		f := tlsFetcher(secure, nil)
		a, b := newHTTPProxy(t, "", ""), newHTTPProxy(t, "", "")
		for i := range 6 {
			proxy := []*httpProxy{a, b}[i%2].URL(nil)
			if _, err := do(t, f, Request{URL: secure.URL + fmt.Sprintf("/%d", i), Proxy: proxy}); err != nil {
				t.Fatal(err)
			}
		}
		// Over https each connection is one CONNECT, kept alive: one per proxy.
		if na, nb := len(a.requests()), len(b.requests()); na != 1 || nb != 1 {
			t.Errorf("proxies saw %d and %d CONNECTs for 3 requests each, want 1 and 1 (one tunnel each, kept alive)", na, nb)
		}
	})
	t.Run("pools are bounded; the evicted one's idle connections close", func(t *testing.T) {
		f := tlsFetcher(secure, func(o *Options) { o.MaxProxyTransports = 2 })
		ps := []*httpProxy{newHTTPProxy(t, "", ""), newHTTPProxy(t, "", ""), newHTTPProxy(t, "", "")}
		for _, p := range ps {
			if _, err := do(t, f, Request{URL: plain.URL, Proxy: p.URL(nil)}); err != nil {
				t.Fatal(err)
			}
		}
		if n := f.proxies.len(); n != 2 {
			t.Errorf("%d proxy pools kept, want 2", n)
		}
		testenv.Eventually(t, 5*time.Second, "the first proxy's idle connection to close", func() bool { return ps[0].closed.Load() == 1 })
		if ps[1].closed.Load() != 0 || ps[2].closed.Load() != 0 {
			t.Errorf("kept pools closed connections: %d, %d", ps[1].closed.Load(), ps[2].closed.Load())
		}
	})
}
