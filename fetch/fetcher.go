package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// Page is a fetched page.
type Page struct {
	// URL is the final URL, after redirects.
	URL string
	// Status is the HTTP status code (2xx, or 304 when NotModified).
	Status int
	// ContentType is the answer's Content-Type header; when that is
	// missing or application/octet-stream, the type sniffed from the body
	// (http.DetectContentType).
	ContentType string
	// HTML is true for HTML and XHTML (text/html, application/xhtml+xml).
	// It is false only with Request.AllowNonHTML.
	HTML bool
	// Body is the page, decompressed; decoded to UTF-8 when it is HTML,
	// as sent when it is not.
	Body []byte
	// Tries is how many requests it took.
	Tries int
	// NotModified is true when the site answered 304 to a request with
	// Request.Validators: the page did not change, and Body is empty. It
	// is an answer, not an error.
	NotModified bool
	// Validators are the ETag and Last-Modified the site sent, to send
	// back on the next fetch of the page.
	Validators Validators
	// Truncated is true when the body was longer than the size limit and
	// was cut there (Request.TruncateBody).
	Truncated bool
	// Redirect is where the answer to a Request.OneHop request redirects
	// to (absolute), Status its 3xx; such a page has no body. Empty
	// otherwise.
	Redirect string
	// Header is the answer's header, as the site sent it (the body above
	// is decompressed whatever its Content-Encoding says): a rendered
	// page's requests hand it to the page.
	Header http.Header
	// Exchange is the request and the answer as they went over the wire,
	// with Request.KeepExchange; nil without.
	Exchange *Exchange

	charge *charge // the page's hold on the Fetcher's memory budget
}

// Release tells the Fetcher the page is done with: its memory counts no
// more against Options.MemoryBudget. Call it once the page's body and what
// was parsed from it are no longer used; it is safe to call twice, or on a
// Fetcher without a budget.
func (p *Page) Release() {
	if p != nil {
		p.charge.release()
	}
}

// Fetcher fetches pages. It is safe for concurrent use.
type Fetcher struct {
	opts    Options
	public  *http.Transport // refuses non-public addresses at connect time
	private *http.Transport // for jobs with allow_private_networks
	proxies *proxyTransports
	memory  *memoryBudget // nil: no bound
}

// New returns a Fetcher. Zero options take their defaults.
func New(opts Options) *Fetcher {
	return newFetcher(opts, nil)
}

// newFetcher is New with the TLS settings for sites and proxies (nil: the
// system's roots); tests pass their own.
func newFetcher(opts Options, tlsConf *tls.Config) *Fetcher {
	opts = opts.withDefaults()
	return &Fetcher{
		opts:    opts,
		public:  newDirectTransport(publicOnly, tlsConf),
		private: newDirectTransport(privateAllowed, tlsConf),
		proxies: newProxyTransports(opts.MaxProxyTransports, tlsConf),
		memory:  newMemoryBudget(opts.MemoryBudget),
	}
}

// CloseIdleConnections closes the connections that no request is using.
func (f *Fetcher) CloseIdleConnections() {
	f.public.CloseIdleConnections()
	f.private.CloseIdleConnections()
	f.proxies.closeIdle()
}

// ErrTooManyRedirects is returned, permanent, when a page redirects more
// than Options.MaxRedirects times (a loop does).
var ErrTooManyRedirects = errors.New("too many redirects")

func newDirectTransport(control func(string, string, syscall.RawConn) error, tlsConf *tls.Config) *http.Transport {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: control}
	return &http.Transport{
		Proxy:               nil, // proxies come from Request.Proxy, never the environment
		DialContext:         dialer.DialContext,
		TLSClientConfig:     tlsConf,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
}

// Do makes exactly one request for req (following redirects), without
// waiting or retrying: the caller schedules retries (the downloader's
// policy, downloader.Options.Backoff). The
// error is an *Error saying whether another try may help (Transient),
// whether the proxy failed rather than the site (ProxyFault), and how long
// a 429 or 503 asked to wait (RetryAfter).
func (f *Fetcher) Do(ctx context.Context, req Request) (*Page, error) {
	page, fe := f.attempt(ctx, req)
	if fe != nil {
		fe.Tries = 1
		return nil, fe
	}
	page.Tries = 1
	return page, nil
}

// attempt makes one request.
func (f *Fetcher) attempt(ctx context.Context, req Request) (*Page, *Error) {
	secrets := proxySecrets(req.Proxy)
	fail := func(err error, status int, transient bool) *Error {
		return &Error{URL: req.URL, Status: status, Transient: transient || errors.Is(err, ErrProxy),
			ProxyFault: errors.Is(err, ErrProxy), Err: err, secrets: secrets}
	}
	if err := req.Validate(); err != nil {
		return nil, fail(err, 0, false)
	}
	hreq, err := f.newHTTPRequest(ctx, req)
	if err != nil {
		return nil, fail(err, 0, false)
	}
	resp, err := f.client(req).Do(hreq)
	if err != nil {
		return nil, fail(err, 0, errTransient(err))
	}
	defer resp.Body.Close()
	if target := redirectTarget(req, resp); target != "" {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
		return &Page{URL: resp.Request.URL.String(), Status: resp.StatusCode, Redirect: target}, nil
	}
	if resp.StatusCode == http.StatusNotModified && !req.Validators.IsZero() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return notModified(req, resp), nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
		fe := fail(fmt.Errorf("http status %d", resp.StatusCode), resp.StatusCode, statusTransient(resp.StatusCode))
		fe.RetryAfter = retryAfter(resp, time.Now())
		return nil, fe
	}
	page, err := f.readPage(req, resp)
	if err != nil {
		return nil, fail(err, resp.StatusCode, errTransient(err))
	}
	return page, nil
}

func (f *Fetcher) newHTTPRequest(ctx context.Context, req Request) (*http.Request, error) {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, req.URL, body)
	if err != nil {
		return nil, err
	}
	if req.OneHop && body == nil {
		hreq.Body = noResend{}
	}
	ua := req.UserAgent
	if ua == "" {
		ua = f.opts.UserAgent
	}
	hreq.Header.Set("User-Agent", ua)
	hreq.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8")
	hreq.Header.Set("Accept-Encoding", acceptEncoding)
	for name, value := range req.Headers {
		hreq.Header.Set(name, value)
	}
	setConditional(hreq.Header, req.Validators)
	return hreq, nil
}

// client is an http.Client for one request: its transport (direct or
// through its proxy), cookie jar, timeout and redirect policy.
func (f *Fetcher) client(req Request) *http.Client {
	var rt http.RoundTripper = f.public
	if req.AllowPrivate {
		rt = f.private
	}
	if req.Proxy != nil {
		rt = &viaProxy{t: f.proxies.get(req.Proxy), proxy: req.Proxy, allowPrivate: req.AllowPrivate}
	}
	timeout := req.Timeout
	if timeout == 0 {
		timeout = f.opts.Timeout
	}
	return &http.Client{Transport: rt, Jar: req.Jar, Timeout: timeout, CheckRedirect: f.checkRedirect(req)}
}

// noResend is the empty body of a OneHop request. net/http's Transport
// sends a GET again on its own when the connection it reused broke after
// the request was written (golang/go#48438), and the site then sees two
// requests where the caller's rules allowed one; it does not resend a
// request whose body it cannot replay (no GetBody). The Transport finds
// the body empty before it writes the request, so none is sent.
type noResend struct{}

func (noResend) Read([]byte) (int, error) { return 0, io.EOF }

func (noResend) Close() error { return nil }

// MaxRedirects is the most redirects a page may take (Options.MaxRedirects),
// for callers that follow a Request.OneHop page's Redirect themselves.
func (f *Fetcher) MaxRedirects() int { return f.opts.MaxRedirects }

// redirectTarget is the absolute target of a OneHop request's redirect,
// or "" when resp is not one (or names no target, which then fails as the
// status it is).
func redirectTarget(req Request, resp *http.Response) string {
	if !req.OneHop {
		return ""
	}
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return ""
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return ""
	}
	target, err := resp.Request.URL.Parse(loc)
	if err != nil {
		return ""
	}
	target.Fragment, target.RawFragment = "", ""
	return target.String()
}

// checkRedirect bounds the redirects followed and keeps them on the hosts
// req.AllowHost accepts; a OneHop request follows none.
func (f *Fetcher) checkRedirect(req Request) func(*http.Request, []*http.Request) error {
	return func(next *http.Request, via []*http.Request) error {
		if req.OneHop {
			return http.ErrUseLastResponse
		}
		if len(via) > f.opts.MaxRedirects {
			return ErrTooManyRedirects
		}
		if req.AllowHost != nil && !req.AllowHost(strings.ToLower(next.URL.Hostname())) {
			return &OffsiteRedirectError{URL: next.URL.String()}
		}
		return nil
	}
}

// readBody reads a page's body within limit: one longer fails with
// ErrTooLarge, or, when req.TruncateBody, is cut there (cut).
func readBody(req Request, r io.Reader, limit, size int64) (body []byte, cut bool, err error) {
	if req.TruncateBody {
		return readCut(r, limit, size)
	}
	body, err = readSized(r, limit, size)
	return body, false, err
}

// readPage reads a 2xx answer: decompressed, within the size limit, and,
// when it is HTML, decoded to UTF-8. A body that is not HTML is not read
// unless req.AllowNonHTML.
func (f *Fetcher) readPage(req Request, resp *http.Response) (page *Page, err error) {
	limit := req.MaxBodyBytes
	if limit == 0 {
		limit = f.opts.MaxBodyBytes
	}
	first := int64(firstCharge)
	if resp.ContentLength > 0 && resp.Header.Get("Content-Encoding") == "" {
		first = resp.ContentLength
	}
	c, err := f.memory.acquire(resp.Request.Context(), min(first, limit))
	if err != nil {
		return nil, fmt.Errorf("wait for memory: %w", err)
	}
	defer func() {
		if err != nil {
			c.release()
		}
	}()
	body, err := decodeContent(resp.Body, resp.Header.Values("Content-Encoding"), limit)
	if err != nil {
		return nil, err
	}
	if c != nil {
		body = &chargedReader{ctx: resp.Request.Context(), r: body, c: c, limit: limit}
	}
	header := resp.Header.Get("Content-Type")
	var head []byte
	if needsSniff(header) {
		if head, err = readLimited(io.LimitReader(body, sniffLen), sniffLen); err != nil {
			return nil, err
		}
	}
	ctype, html := contentType(header, head)
	if !html && !req.AllowNonHTML {
		return nil, &NotHTMLError{ContentType: ctype}
	}
	size := int64(0)
	if resp.Header.Get("Content-Encoding") == "" {
		size = resp.ContentLength
	}
	raw, cut, err := readBody(req, io.MultiReader(bytes.NewReader(head), body), limit, size)
	if err != nil {
		return nil, err
	}
	var exchange *Exchange
	if req.KeepExchange {
		exchange = exchangeOf(resp, raw)
	}
	if html {
		if raw, err = decodeCharset(raw, header); err != nil {
			return nil, err
		}
	}
	return &Page{URL: resp.Request.URL.String(), Status: resp.StatusCode, ContentType: ctype, HTML: html, Body: raw,
		Truncated: cut, Validators: validatorsOf(resp.Header), Header: resp.Header, Exchange: exchange, charge: c}, nil
}
