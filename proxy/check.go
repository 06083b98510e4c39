package proxy

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Anonymity is how much a proxy reveals of the crawler, as the judge saw it.
type Anonymity string

// The anonymity levels, from worst to best.
const (
	// Unknown: the check URL is not a judge, so nobody looked.
	Unknown Anonymity = ""
	// Transparent proxies pass the crawler's own address on (X-Forwarded-For
	// and the like).
	Transparent Anonymity = "transparent"
	// Anonymous proxies say they are proxies (Via, Forwarded ...) but hide
	// the crawler's address.
	Anonymous Anonymity = "anonymous"
	// Elite proxies add nothing.
	Elite Anonymity = "elite"
)

func (a Anonymity) rank() int {
	switch a {
	case Transparent:
		return 1
	case Anonymous:
		return 2
	case Elite:
		return 3
	}
	return 0
}

// revealing are the headers proxies add to a request they forward.
var revealing = []string{"X-Forwarded-For", "X-Real-Ip", "Forwarded", "Via", "Client-Ip",
	"X-Client-Ip", "True-Client-Ip", "X-Originating-Ip", "X-Proxy-Id", "X-Forwarded-Host"}

// maxCheckBody bounds the answer to a check.
const maxCheckBody = 64 << 10

// CheckResult is the outcome of validating one proxy.
type CheckResult struct {
	Proxy Proxy
	// OK is true when the check request came back intact.
	OK bool
	// Hard means the proxy is rejected at once rather than retried with
	// backoff: it asked for credentials (407), answered garbage, tampered
	// with the check, or is less anonymous than required.
	Hard bool
	// Reason says why the check failed.
	Reason string
	// Latency is the time the check request took, body included.
	Latency time.Duration
	// Tunnel is true when the proxy carries CONNECT (https targets).
	Tunnel bool
	// Anonymity is what the judge saw; Unknown with a plain check URL.
	Anonymity Anonymity
}

// checker validates proxies against one check URL.
type checker struct {
	target  *url.URL
	judge   bool // target is a judge: verify the echo
	timeout time.Duration
	minAnon Anonymity
	selfIP  atomic.Value // string: our address as the judge sees it directly
}

// direct asks the judge for our own address without a proxy. It tells a
// broken check URL from broken proxies, and a transparent proxy from an
// anonymous one.
func (c *checker) direct(ctx context.Context) error {
	client := &http.Client{Timeout: c.timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	token := newToken()
	resp, err := client.Do(c.request(ctx, c.target, token))
	if err != nil {
		return fmt.Errorf("check url unreachable directly: %w", errors.Unwrap(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxCheckBody))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("check url answers http status %d directly", resp.StatusCode)
	}
	if c.judge {
		var r JudgeReply
		if json.Unmarshal(body, &r) != nil || r.Token != token {
			return errors.New("check url is not a judge (no token echoed)")
		}
		host, _, _ := net.SplitHostPort(r.Addr)
		c.selfIP.Store(host)
	}
	return nil
}

func (c *checker) request(ctx context.Context, target *url.URL, token string) *http.Request {
	u := *target
	if c.judge {
		q := u.Query()
		q.Set(TokenParam, token)
		u.RawQuery = q.Encode()
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	req.Header.Set(TokenHeader, token)
	req.Header.Set("User-Agent", "crawler-proxy-check/1.0")
	return req
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// check validates p: one request through it to the check URL, then, for
// HTTP proxies and a plain-http check URL, a CONNECT tunnel to the same
// server.
func (c *checker) check(ctx context.Context, p Proxy) CheckResult {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res := c.get(ctx, p)
	if !res.OK {
		return res
	}
	switch {
	case p.Scheme() == SOCKS5 || c.target.Scheme == "https":
		res.Tunnel = true
	default:
		res.Tunnel = c.tunnel(ctx, p) == nil
	}
	return res
}

// get sends the check request through p and judges the answer.
func (c *checker) get(ctx context.Context, p Proxy) CheckResult {
	var spoke atomic.Bool // the proxy sent us bytes
	dialer := &net.Dialer{Timeout: c.timeout}
	tr := &http.Transport{
		Proxy:             http.ProxyURL(p.URL()),
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &watchConn{Conn: conn, read: &spoke}, nil
		},
		TLSHandshakeTimeout:   c.timeout,
		ResponseHeaderTimeout: c.timeout,
	}
	defer tr.CloseIdleConnections()
	token := newToken()
	start := time.Now()
	resp, err := (&http.Client{Transport: tr, Timeout: c.timeout}).Do(c.request(ctx, c.target, token))
	if err != nil {
		return failure(p, err, spoke.Load())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxCheckBody))
	latency := time.Since(start)
	if err != nil {
		return failure(p, err, false)
	}
	return c.judgeAnswer(p, resp, body, token, latency)
}

// failure classifies a request that got no response.
func failure(p Proxy, err error, spoke bool) CheckResult {
	res := CheckResult{Proxy: p}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		res.Reason = "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		res.Reason = "connection refused"
	case spoke && !errors.Is(err, syscall.ECONNRESET):
		res.Reason, res.Hard = "garbage answer (not HTTP)", true
	default:
		res.Reason = "connection failed"
	}
	return res
}

// judgeAnswer checks the status, the echoed token and the headers the
// proxy added.
func (c *checker) judgeAnswer(p Proxy, resp *http.Response, body []byte, token string, latency time.Duration) CheckResult {
	res := CheckResult{Proxy: p, Latency: latency}
	switch {
	case resp.StatusCode == http.StatusProxyAuthRequired:
		res.Reason, res.Hard = "proxy authentication required (407)", true
		return res
	case resp.StatusCode/100 != 2:
		res.Reason = fmt.Sprintf("http status %d", resp.StatusCode)
		return res
	case !c.judge:
		res.OK = true
		return res
	}
	var r JudgeReply
	if json.Unmarshal(body, &r) != nil || r.Token != token || r.Headers.Get(TokenHeader) != token {
		res.Reason, res.Hard = "tampered: the judge's echo did not come back intact", true
		return res
	}
	res.Anonymity = c.anonymity(r.Headers)
	if c.sameHost(r.Addr) && c.minAnon != Elite {
		// A gateway on our own host: the site sees our address through it
		// whatever it forwards, and the operator listed it.
		res.OK, res.Reason = true, SameHostNote
		return res
	}
	if res.Anonymity.rank() < c.minAnon.rank() {
		res.Reason, res.Hard = fmt.Sprintf("%s proxy, %s required", res.Anonymity, c.minAnon), true
		return res
	}
	res.OK = true
	return res
}

// SameHostNote is the Reason of a usable proxy on the crawler's own host,
// which `client proxies` shows.
const SameHostNote = "same host as the crawler (the site sees our address through it)"

// sameHost reports whether the judge saw the proxied request come from
// our own address: the proxy runs on the crawler's host.
func (c *checker) sameHost(addr string) bool {
	self, _ := c.selfIP.Load().(string)
	host, _, err := net.SplitHostPort(addr)
	return err == nil && self != "" && host == self
}

func (c *checker) anonymity(h http.Header) Anonymity {
	self, _ := c.selfIP.Load().(string)
	level := Elite
	for _, name := range revealing {
		for _, v := range h.Values(name) {
			if self != "" && strings.Contains(v, self) {
				return Transparent
			}
			level = Anonymous
		}
	}
	return level
}

// tunnel opens a CONNECT tunnel through an HTTP(S) proxy to the check
// URL's server and sends the check request through it.
func (c *checker) tunnel(ctx context.Context, p Proxy) error {
	conn, err := dialProxy(ctx, p, c.timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	br := bufio.NewReader(conn)
	if err := connect(conn, br, p, canonicalAddr(c.target)); err != nil {
		return err
	}
	token := newToken()
	if err := c.request(ctx, c.target, token).Write(conn); err != nil {
		return err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxCheckBody))
	if res := c.judgeAnswer(p, resp, body, token, 0); !res.OK {
		return errors.New(res.Reason)
	}
	return nil
}

func dialProxy(ctx context.Context, p Proxy, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	if p.Scheme() == HTTPS {
		u := p.URL()
		td := &tls.Dialer{NetDialer: d, Config: &tls.Config{ServerName: u.Hostname()}}
		return td.DialContext(ctx, "tcp", p.Host())
	}
	return d.DialContext(ctx, "tcp", p.Host())
}

// connect asks the proxy for a tunnel to addr.
func connect(conn net.Conn, br *bufio.Reader, p Proxy, addr string) error {
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: addr}, Host: addr, Header: http.Header{}}
	if u := p.URL(); u.User != nil {
		pass, _ := u.User.Password()
		cred := base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + pass))
		req.Header.Set("Proxy-Authorization", "Basic "+cred)
	}
	if err := req.Write(conn); err != nil {
		return err
	}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("CONNECT: http status %d", resp.StatusCode)
	}
	return nil
}

func canonicalAddr(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// watchConn records that the peer sent at least one byte.
type watchConn struct {
	net.Conn
	read *atomic.Bool
}

func (w *watchConn) Read(b []byte) (int, error) {
	n, err := w.Conn.Read(b)
	if n > 0 {
		w.read.Store(true)
	}
	return n, err
}
