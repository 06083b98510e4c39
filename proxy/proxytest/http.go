package proxytest

import (
	"encoding/base64"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/elazarl/goproxy"
)

// NewHTTP starts a healthy HTTP forward proxy (goproxy) that also tunnels
// CONNECT.
func NewHTTP() (*Server, error) {
	return serveHTTP("http", func(s *Server) http.Handler { return s.counting(forwarder()) })
}

// NewAuth starts an HTTP forward proxy that answers 407 unless the request
// carries Basic proxy credentials user:pass. Its Line includes them.
func NewAuth(user, pass string) (*Server, error) {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	fwd := forwarder()
	s, err := serveHTTP("http", func(s *Server) http.Handler {
		return s.counting(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Proxy-Authorization") != want {
				w.Header().Set("Proxy-Authenticate", `Basic realm="proxytest"`)
				http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
				return
			}
			fwd.ServeHTTP(w, r)
		}))
	})
	if err == nil {
		s.user = url.UserPassword(user, pass)
	}
	return s, err
}

// NewHostBan starts an HTTP forward proxy that answers 403 to every
// request for host (host:port as in the target URL), as a site that
// banned the proxy's address would, and forwards the rest.
func NewHostBan(host string) (*Server, error) {
	fwd := forwarder()
	return serveHTTP("http", func(s *Server) http.Handler {
		return s.counting(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.EqualFold(targetHost(r), host) {
				http.Error(w, "banned", http.StatusForbidden)
				return
			}
			fwd.ServeHTTP(w, r)
		}))
	})
}

// NewTransparent starts an HTTP forward proxy that tells the target the
// client's address in X-Forwarded-For.
func NewTransparent() (*Server, error) {
	fwd := forwarder()
	return serveHTTP("http", func(s *Server) http.Handler {
		return s.counting(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
				r.Header.Set("X-Forwarded-For", ip)
			}
			fwd.ServeHTTP(w, r)
		}))
	})
}

// NewTransparentElsewhere starts a transparent HTTP forward proxy that
// reaches targets from 127.0.0.2: to a judge on loopback it looks like a
// proxy on another host than the client's, passing the client's address.
func NewTransparentElsewhere() (*Server, error) {
	fwd := forwarder()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	fwd.Tr = &http.Transport{Proxy: nil, DialContext: d.DialContext}
	return serveHTTP("http", func(s *Server) http.Handler {
		return s.counting(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
				r.Header.Set("X-Forwarded-For", ip)
			}
			fwd.ServeHTTP(w, r)
		}))
	})
}

func targetHost(r *http.Request) string {
	if r.Method == http.MethodConnect {
		return r.Host
	}
	return r.URL.Host
}

// ProxiedBy is the header the HTTP proxies add to every request they
// forward (not to tunnels, whose bytes they do not read), naming
// themselves by Addr: a test site can tell a relayed request from a direct
// one, and which proxy relayed it. The judge ignores it (it is not one of
// the headers that reveal a proxy), so the proxies stay elite.
const ProxiedBy = "X-Proxied-By"

// counting counts every request before h sees it, and marks the ones it
// forwards with ProxiedBy.
func (s *Server) counting(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if r.Method != http.MethodConnect {
			r.Header.Set(ProxiedBy, s.Addr())
		}
		h.ServeHTTP(w, r)
	})
}

// forwarder is goproxy forwarding directly (never through the
// environment's proxy), silent.
func forwarder() *goproxy.ProxyHttpServer {
	p := goproxy.NewProxyHttpServer()
	p.Logger = log.New(io.Discard, "", 0)
	p.Tr = &http.Transport{Proxy: nil}
	p.ConnectDial = nil
	return p
}
