package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"golang.org/x/net/html/charset"
)

// Options configures a Fetcher. Zero values take the defaults.
type Options struct {
	// Timeout bounds one request, body included. Default 30s.
	Timeout time.Duration
	// MaxBodyBytes bounds a page's size. Default 10 MiB.
	MaxBodyBytes int64
	// MaxRedirects bounds the redirects followed. Default 5.
	MaxRedirects int
	// UserAgent is sent with every request.
	UserAgent string
	// RetryBase is the first backoff delay between tries. Default 500ms.
	RetryBase time.Duration
	// RetryMax caps one backoff delay. Default 10s.
	RetryMax time.Duration
}

func (o *Options) applyDefaults() {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 10 << 20
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = 5
	}
	if o.UserAgent == "" {
		o.UserAgent = "crawler/1.0 (+https://github.com/crawler-dev/crawler)"
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 500 * time.Millisecond
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 10 * time.Second
	}
}

// Request is one page to fetch.
type Request struct {
	// URL is the page's absolute URL.
	URL string
	// AllowPrivate permits loopback and private addresses.
	AllowPrivate bool
	// MaxRetries is how often a transient failure is tried again.
	MaxRetries int
}

// Page is a fetched page with its body decoded to UTF-8.
type Page struct {
	// URL is the final URL after redirects.
	URL string
	// Status is the HTTP status code (2xx).
	Status int
	// ContentType is the response's Content-Type header.
	ContentType string
	// Body is the page decoded to UTF-8.
	Body []byte
	// Tries is how many requests it took.
	Tries int
}

// Fetcher fetches pages. It is safe for concurrent use.
type Fetcher struct {
	opts    Options
	public  *http.Client // refuses non-public addresses at connect time
	private *http.Client // for jobs with allow_private_networks
}

// New returns a Fetcher.
func New(opts Options) *Fetcher {
	opts.applyDefaults()
	return &Fetcher{
		opts:    opts,
		public:  newClient(opts, publicOnly),
		private: newClient(opts, nil),
	}
}

var errTooManyRedirects = errors.New("too many redirects")

func newClient(opts Options, control func(string, string, syscall.RawConn) error) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: control}
	transport := &http.Transport{
		Proxy:                 nil, // proxies come from the proxy pool, never the environment
		DialContext:           dialer.DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: opts.Timeout,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   opts.Timeout,
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) > opts.MaxRedirects {
				return errTooManyRedirects
			}
			return nil
		},
	}
}

// Fetch gets req.URL, retrying transient failures with exponential backoff
// and jitter up to req.MaxRetries times. The error is an *Error.
func (f *Fetcher) Fetch(ctx context.Context, req Request) (*Page, error) {
	policy := backoff.NewExponentialBackOff()
	policy.InitialInterval = f.opts.RetryBase
	policy.MaxInterval = f.opts.RetryMax
	policy.MaxElapsedTime = 0
	retries := backoff.WithContext(backoff.WithMaxRetries(policy, uint64(max(req.MaxRetries, 0))), ctx)

	var page *Page
	var last error
	tries := 0
	err := backoff.Retry(func() error {
		tries++
		p, err := f.once(ctx, req)
		if err != nil {
			last = err
			if !IsTransient(err) {
				return backoff.Permanent(err)
			}
			return err
		}
		page = p
		return nil
	}, retries)
	if err != nil {
		var fe *Error
		if !errors.As(err, &fe) {
			// ctx ended while waiting to retry: backoff returns ctx.Err().
			return nil, &Error{URL: req.URL, Err: fmt.Errorf("%w (last try: %v)", err, last)}
		}
		return nil, err
	}
	page.Tries = tries
	return page, nil
}

// once makes one request.
func (f *Fetcher) once(ctx context.Context, req Request) (*Page, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, req.URL, nil)
	if err != nil {
		return nil, &Error{URL: req.URL, Err: err}
	}
	hreq.Header.Set("User-Agent", f.opts.UserAgent)
	hreq.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8")
	client := f.public
	if req.AllowPrivate {
		client = f.private
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, &Error{URL: req.URL, Err: err, Transient: errTransient(err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
		return nil, &Error{URL: req.URL, Status: resp.StatusCode, Transient: statusTransient(resp.StatusCode),
			Err: fmt.Errorf("http status %d", resp.StatusCode)}
	}
	body, err := f.readBody(resp)
	if err != nil {
		return nil, &Error{URL: req.URL, Status: 0, Err: err, Transient: errTransient(err)}
	}
	return &Page{URL: resp.Request.URL.String(), Status: resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"), Body: body}, nil
}

// readBody reads at most MaxBodyBytes and decodes the charset to UTF-8.
func (f *Fetcher) readBody(resp *http.Response) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, f.opts.MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if int64(len(raw)) > f.opts.MaxBodyBytes {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, f.opts.MaxBodyBytes)
	}
	return decodeCharset(raw, resp.Header.Get("Content-Type"))
}

// decodeCharset converts body to UTF-8 using the Content-Type header, the
// BOM or a <meta charset>, as browsers do.
func decodeCharset(body []byte, contentType string) ([]byte, error) {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" {
		return body, nil
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", name, err)
	}
	return out, nil
}
