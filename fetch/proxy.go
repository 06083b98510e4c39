package fetch

import (
	"container/list"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// proxyTransports keeps one http.Transport, and so one connection pool,
// per proxy identity (its URL with credentials), so that rotating proxies
// is not defeated by keep-alives and a connection never carries a request
// meant for another proxy. At most max are kept; the least recently used
// one beyond that has its idle connections closed (connections still in
// use close when they next go idle, after the idle timeout).
type proxyTransports struct {
	max  int
	tls  *tls.Config
	mu   sync.Mutex
	byID map[string]*list.Element // of *proxyTransport
	lru  *list.List               // most recently used first
}

type proxyTransport struct {
	id string
	t  *http.Transport
}

func newProxyTransports(max int, tlsConf *tls.Config) *proxyTransports {
	return &proxyTransports{max: max, tls: tlsConf, byID: map[string]*list.Element{}, lru: list.New()}
}

// get returns the transport for proxy p, creating it if needed.
func (c *proxyTransports) get(p *url.URL) *http.Transport {
	id := p.String() // credentials included: another user is another pool
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[id]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*proxyTransport).t
	}
	pt := &proxyTransport{id: id, t: newProxyTransport(p, c.tls)}
	c.byID[id] = c.lru.PushFront(pt)
	for c.lru.Len() > c.max {
		old := c.lru.Remove(c.lru.Back()).(*proxyTransport)
		delete(c.byID, old.id)
		old.t.CloseIdleConnections()
	}
	return pt.t
}

// len is how many transports are kept.
func (c *proxyTransports) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

func (c *proxyTransports) closeIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.lru.Front(); e != nil; e = e.Next() {
		e.Value.(*proxyTransport).t.CloseIdleConnections()
	}
}

// newProxyTransport sends everything through p. Its dialer has no address
// guard: proxies are configured by the operator and may be private. The
// target is checked by viaProxy before each request.
func newProxyTransport(p *url.URL, tlsConf *tls.Config) *http.Transport {
	fixed := *p
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:               http.ProxyURL(&fixed),
		DialContext:         dialer.DialContext,
		TLSClientConfig:     tlsConf,
		MaxIdleConns:        32,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		OnProxyConnectResponse: func(_ context.Context, _ *url.URL, _ *http.Request, resp *http.Response) error {
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("CONNECT refused: %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
			}
			return nil
		},
	}
}

// viaProxy sends one request hop through a proxy transport: it checks the
// target against the address guard first, and marks the failures that are
// the proxy's with ErrProxy.
type viaProxy struct {
	t            *http.Transport
	proxy        *url.URL
	allowPrivate bool
}

// RoundTrip implements http.RoundTripper.
func (v *viaProxy) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkTarget(req.Context(), req.URL.Hostname(), v.allowPrivate); err != nil {
		return nil, err
	}
	forward := req.URL.Scheme == "http" && (v.proxy.Scheme == "http" || v.proxy.Scheme == "https")
	ph := &proxyPhase{targetTLSAt: 1}
	if v.proxy.Scheme == "https" {
		ph.targetTLSAt = 2 // the first handshake is with the proxy
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), ph.trace()))
	resp, err := v.t.RoundTrip(req)
	if err != nil {
		if (forward || !ph.reached.Load()) && !errors.Is(err, context.Canceled) {
			err = &proxyFault{err}
		}
		return nil, err
	}
	if forward && resp.StatusCode == http.StatusProxyAuthRequired {
		_ = resp.Body.Close()
		return nil, &proxyFault{fmt.Errorf("proxy answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))}
	}
	if forward {
		resp.Body = &proxyBody{resp.Body}
	}
	return resp, nil
}

// proxyPhase tells, for a tunnel (CONNECT or SOCKS), whether the site was
// reached: the tunnel is up once the connection is handed over or the TLS
// handshake with the site starts. Until then every failure is the proxy's.
// In forward mode (an http URL through an http(s) proxy) the proxy relays
// every byte, so every transport failure is its.
type proxyPhase struct {
	targetTLSAt int32 // which TLS handshake is the site's
	handshakes  atomic.Int32
	reached     atomic.Bool
}

func (p *proxyPhase) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { p.reached.Store(true) },
		TLSHandshakeStart: func() {
			if p.handshakes.Add(1) >= p.targetTLSAt {
				p.reached.Store(true)
			}
		},
	}
}

// proxyBody marks errors reading a body relayed by a forward proxy.
type proxyBody struct{ io.ReadCloser }

func (b *proxyBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && !errors.Is(err, context.Canceled) {
		err = &proxyFault{err}
	}
	return n, err
}
