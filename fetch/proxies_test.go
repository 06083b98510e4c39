package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	socks5 "github.com/armon/go-socks5"
	"github.com/elazarl/goproxy"
)

// Loopback forward proxies for the tests: goproxy (HTTP and CONNECT), with
// or without Basic credentials, and a SOCKS5 server.

// Test credentials: distinctive, so that a leak shows.
const (
	proxyUser = "crawl-user-7f3a"
	proxyPass = "s3cr3t-pw-91xq"
)

// httpProxy is a goproxy on 127.0.0.1 that records what it sees.
type httpProxy struct {
	*httptest.Server
	mu       sync.Mutex
	seen     []proxied // every request or CONNECT, in order
	newConns atomic.Int64
	closed   atomic.Int64
}

// proxied is one request a proxy saw: on which client connection, with
// which Proxy-Authorization.
type proxied struct {
	conn, auth, method, target string
}

func (p *httpProxy) requests() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxied(nil), p.seen...)
}

// URL returns the proxy's URL with the given user info (nil: none).
func (p *httpProxy) URL(user *url.Userinfo) *url.URL {
	u, _ := url.Parse(p.Server.URL)
	u.User = user
	return u
}

// newHTTPProxy starts a goproxy; with user != "" it wants those Basic
// credentials and answers 407 (to a request or a CONNECT) without them.
func newHTTPProxy(t *testing.T, user, pass string) *httpProxy {
	t.Helper()
	p := unstartedHTTPProxy(user, pass)
	p.Start()
	t.Cleanup(p.Close)
	return p
}

// newHTTPSProxy starts a goproxy that clients reach over TLS, with the
// certificate of every httptest TLS server.
func newHTTPSProxy(t *testing.T) *httpProxy {
	t.Helper()
	p := unstartedHTTPProxy("", "")
	p.StartTLS()
	t.Cleanup(p.Close)
	return p
}

func unstartedHTTPProxy(user, pass string) *httpProxy {
	gp := goproxy.NewProxyHttpServer()
	gp.Logger = log.New(io.Discard, "", 0)
	gp.Tr = &http.Transport{Proxy: nil} // never the environment's proxy
	gp.ConnectDial = nil
	p := &httpProxy{}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	authorized := func(r *http.Request) bool {
		p.mu.Lock()
		p.seen = append(p.seen, proxied{conn: r.RemoteAddr, auth: r.Header.Get("Proxy-Authorization"), method: r.Method, target: r.Host})
		p.mu.Unlock()
		return user == "" || r.Header.Get("Proxy-Authorization") == want
	}
	gp.OnRequest().DoFunc(func(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		if !authorized(r) {
			return r, goproxy.NewResponse(r, "text/plain", http.StatusProxyAuthRequired, "proxy credentials please")
		}
		return r, nil
	})
	gp.OnRequest().HandleConnectFunc(func(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		if !authorized(ctx.Req) {
			ctx.Resp = goproxy.NewResponse(ctx.Req, "text/plain", http.StatusProxyAuthRequired, "proxy credentials please")
			return goproxy.RejectConnect, host
		}
		return goproxy.OkConnect, host
	})
	p.Server = httptest.NewUnstartedServer(gp)
	p.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			p.newConns.Add(1)
		case http.StateClosed, http.StateHijacked:
			p.closed.Add(1)
		}
	}
	return p
}

// socksProxy is a SOCKS5 server on 127.0.0.1.
type socksProxy struct {
	ln       net.Listener
	connects atomic.Int64 // CONNECT commands allowed
}

func (s *socksProxy) URL(user *url.Userinfo) *url.URL {
	return &url.URL{Scheme: "socks5", Host: s.ln.Addr().String(), User: user}
}

// Allow counts the CONNECT commands (socks5.RuleSet).
func (s *socksProxy) Allow(ctx context.Context, req *socks5.Request) (context.Context, bool) {
	s.connects.Add(1)
	return ctx, req.Command == socks5.ConnectCommand
}

func newSOCKSProxy(t *testing.T, user, pass string) *socksProxy {
	t.Helper()
	s := &socksProxy{}
	conf := &socks5.Config{Logger: log.New(io.Discard, "", 0), Rules: s}
	if user != "" {
		conf.Credentials = socks5.StaticCredentials{user: pass}
	}
	srv, err := socks5.New(conf)
	if err != nil {
		t.Fatal(err)
	}
	if s.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(s.ln)
	}()
	t.Cleanup(func() {
		_ = s.ln.Close()
		<-done
	})
	return s
}

// tlsFetcher is a test Fetcher that trusts srv's certificate.
func tlsFetcher(srv *httptest.Server, edit func(*Options)) *Fetcher {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	o := Options{Timeout: 5 * time.Second}
	if edit != nil {
		edit(&o)
	}
	return newFetcher(o, &tls.Config{RootCAs: pool})
}

// refusedAddr is a loopback address where nothing listens.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// noSecrets fails the test if the error, formatted any way, shows the
// test credentials.
func noSecrets(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err.Error())} {
		for _, secret := range []string{proxyUser, proxyPass, base64.StdEncoding.EncodeToString([]byte(proxyUser + ":" + proxyPass))} {
			if strings.Contains(s, secret) {
				t.Errorf("error shows a proxy credential: %s", s)
			}
		}
	}
}
