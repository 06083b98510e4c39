package render

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/metrics"
)

// Page is one page to render: the document its caller fetched, and how.
type Page struct {
	// URL is the document's URL, after redirects.
	URL string
	// Status and ContentType are the document's; Body is its content,
	// in UTF-8.
	Status      int
	ContentType string
	Body        []byte
	// Rendering is how the page's kind is rendered.
	Rendering jobspec.Rendering
	// AllowPrivate lets the page's requests reach loopback and private
	// addresses (allow_private_networks).
	AllowPrivate bool
	// UserAgent and Headers are sent with every request the page makes.
	UserAgent string
	Headers   map[string]string
	// Admit, when not nil, is asked before each request to the page's own
	// host: robots.txt and a place in the host's budget. The request is
	// failed when it returns an error; otherwise done is called with the
	// answer's status (0 for none) once it arrives.
	Admit func(ctx context.Context, rawURL string) (done func(status int), err error)
	// Fetch, when not nil, sends every request the page makes that is
	// neither blocked nor refused, and the answer it returns is handed to
	// the page. The caller's fetch path applies (its proxy choice, address
	// guard, cookies). Nil sends them with the renderer's own fetcher,
	// directly, with the address guard, UserAgent, Headers and Jar. The
	// browser never sends a request itself either way.
	Fetch func(ctx context.Context, req SubRequest) (Answer, error)
	// Jar, when not nil, holds the job's cookies: the page sees those of
	// its URL (document.cookie), and the cookies its scripts set are kept
	// in it for the job's next pages. Nil keeps none past the rendering.
	Jar http.CookieJar
}

// SubRequest is a request a rendered page makes, for Page.Fetch.
type SubRequest struct {
	URL    string
	Method string
	// Headers are those the page's browser would send (cookies the page
	// set meanwhile included), but for the user agent, the encodings
	// accepted and those the fetch path sets itself.
	Headers map[string]string
	Body    []byte
}

// Answer is what Page.Fetch got for a SubRequest: a status (not 2xx
// included), its Content-Type and body (decoded as the fetch path does),
// and the other headers the site sent. The page gets those headers but
// the hop-by-hop ones, Content-Encoding and Content-Length (the body is
// handed over decompressed) and Set-Cookie (the job's cookie jar keeps
// the site's cookies, not the page); ContentType, when set, replaces the
// header's Content-Type.
type Answer struct {
	Status      int
	ContentType string
	Header      http.Header
	Body        []byte
}

// Result is a rendered page.
type Result struct {
	// HTML is the DOM the page's scripts left, serialized.
	HTML []byte
	// Requests counts the requests the page made that were sent for it
	// (by Page.Fetch or the renderer's own fetcher).
	Requests int
	// Blocked lists the URLs refused for their resource type (block).
	Blocked []string
	// Refused lists the URLs refused by the address guard or by Admit.
	Refused []string
	// Took is how long the rendering took, the wait for a tab excluded.
	Took time.Duration
	// Unsettled is true when the page was read without wait_for and its
	// requests never stopped for QuietFor within render_timeout: it was
	// read as it stood near the end of its timeout.
	Unsettled bool
}

// QuietFor is how long no request of a page may be in flight before a
// page without wait_for is read: what its scripts fetch after the load
// event has arrived by then.
const QuietFor = 500 * time.Millisecond

// Renderer renders pages in one browser, a few tabs at a time; see the
// package comment. It is safe for concurrent use.
type Renderer struct {
	opts Options
	log  *zap.Logger
	tabs chan struct{}  // a token per tab rendering now (Options.Tabs)
	idle chan *tab      // open tabs, kept for the next rendering
	own  *fetch.Fetcher // sends the requests of pages without Page.Fetch

	memory     memoryWatch   // the cap while pages render (memory.go)
	watchEvery time.Duration // how often it reads; 0: not at all (tests)

	mu        sync.Mutex
	cur       *instance
	renders   atomic.Int64
	closed    bool
	restarted func(reason string) // OnRestart's; nil for none
}

// New returns a Renderer; the browser starts at the first Render or Check.
func New(opts Options, log *zap.Logger) (*Renderer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Renderer{opts: opts, log: log.Named("render"), tabs: make(chan struct{}, opts.Tabs),
		idle: make(chan *tab, opts.Tabs), own: fetch.New(fetch.Options{}), watchEvery: memoryWatchEvery}, nil
}

// Available reports whether the browser is installed where Options say,
// without starting it: an error wrapping ErrNoBrowser says why not. A
// process announces that it can render on this (a slave's node record);
// Check goes further and starts the browser.
func (r *Renderer) Available() error {
	if _, err := exec.LookPath(r.opts.Browser); err != nil {
		return fmt.Errorf("%w: %w", ErrNoBrowser, err)
	}
	return nil
}

// Check starts the browser if it is not running and reports whether it
// can render: an error wrapping ErrNoBrowser says why not.
func (r *Renderer) Check(context.Context) error {
	in, err := r.instance()
	if err != nil {
		return err
	}
	in.release()
	return nil
}

// OnRestart has f called each time the browser is replaced, with the
// reason: metrics.RestartDied (it crashed or was killed),
// metrics.RestartHung (it stopped answering) or metrics.RestartMemory
// (past Options.MaxMemory). f runs with the renderer locked, so it must
// be quick and must not call the renderer; Registry.BrowserRestarted is
// such a function.
func (r *Renderer) OnRestart(f func(reason string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.restarted = f
}

// Close stops the browser; renderings still running fail.
func (r *Renderer) Close() error {
	r.mu.Lock()
	in := r.cur
	r.cur, r.closed = nil, true
	r.mu.Unlock()
	if in != nil {
		in.retire()
	}
	r.own.CloseIdleConnections()
	for {
		select {
		case t := <-r.idle:
			t.close()
		default:
			return nil
		}
	}
}

// instance returns the running browser, held, starting one if none runs
// or the last one died.
func (r *Renderer) instance() (*instance, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("render: the renderer is closed")
	}
	if r.cur != nil && !r.cur.alive() {
		r.log.Warn("browser died; starting another", zap.Int("pid", r.cur.pid))
		r.cur.retire()
		r.cur = nil
		r.count(metrics.RestartDied)
	}
	if r.cur == nil {
		in, err := startBrowser(r.opts, r.log)
		if err != nil {
			return nil, err
		}
		r.log.Info("browser started", zap.Int("pid", in.pid))
		r.cur = in
	}
	r.cur.hold()
	return r.cur, nil
}

// retire stops in once its renderings end; when it is still the current
// browser (it died, hangs, or grew past the memory cap, reason says which)
// the next rendering starts another, and the restart is counted once.
func (r *Renderer) retire(in *instance, reason, why string) {
	r.mu.Lock()
	current := r.cur == in
	if current {
		r.cur = nil
		r.count(reason)
	}
	r.mu.Unlock()
	if current {
		r.log.Warn("browser restarted", zap.Int("pid", in.pid), zap.String("reason", reason), zap.String("why", why))
	}
	in.retire()
}

// count reports a restart to the OnRestart function; r.mu is held.
func (r *Renderer) count(reason string) {
	if r.restarted != nil {
		r.restarted(reason)
	}
}

// Render loads p in a tab, waits as its Rendering says, and returns the
// DOM. It waits for a free tab first (until ctx ends). A page that does
// not render within its timeout is ErrTimeout; a browser that dies
// meanwhile, ErrBrowserDied (both worth another try); a browser that
// cannot start, ErrNoBrowser.
func (r *Renderer) Render(ctx context.Context, p Page) (Result, error) {
	select {
	case r.tabs <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	defer func() { <-r.tabs }()
	in, err := r.instance()
	if err != nil {
		return Result{}, err
	}
	defer in.release()
	start := time.Now()
	t, err := r.tab(in)
	if err != nil {
		return Result{Took: time.Since(start)}, r.classify(ctx, in, p, err)
	}
	res, err := r.renderIn(ctx, t, p)
	if err != nil {
		t.close()
		err = r.classify(ctx, in, p, err)
	} else {
		r.putBack(t)
	}
	res.Took = time.Since(start)
	r.checkMemory(in, errors.Is(err, ErrMemory))
	return res, err
}

// tab returns an idle tab of in, or opens one. Idle tabs of a browser
// that was replaced are closed.
func (r *Renderer) tab(in *instance) (*tab, error) {
	for {
		select {
		case t := <-r.idle:
			if t.in == in {
				return t, nil
			}
			t.close()
		default:
			return openTab(in)
		}
	}
}

// putBack keeps t for the next rendering once it is reset, or closes it.
func (r *Renderer) putBack(t *tab) {
	if !t.reset() {
		t.close()
		return
	}
	select {
	case r.idle <- t:
	default:
		t.close()
	}
}

// classify turns a failed rendering's error into what it means: the
// caller's context ended, the browser died (it is replaced), or the page
// passed its timeout.
func (r *Renderer) classify(ctx context.Context, in *instance, p Page, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case !in.alive():
		r.retire(in, metrics.RestartDied, err.Error())
		return fmt.Errorf("%w: %s: %w", ErrBrowserDied, p.URL, err)
	case !r.responds(in):
		r.retire(in, metrics.RestartHung, err.Error())
		return fmt.Errorf("%w: %s: %w", ErrBrowserDied, p.URL, err)
	case errors.Is(err, ErrNavigation), errors.Is(err, ErrMemory):
		return fmt.Errorf("render %s: %w", p.URL, err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %s did not render within %s", ErrTimeout, p.URL, p.Rendering.Timeout)
	}
	return fmt.Errorf("render %s: %w", p.URL, err)
}

// responds reports whether the browser answers a command within 5s.
func (r *Renderer) responds(in *instance) bool {
	ctx, cancel := context.WithTimeout(in.ctx, 5*time.Second)
	defer cancel()
	_, err := chromedp.CallBrowser(ctx, browser.GetVersion, cdp.Empty{})
	return err == nil
}

// memoryCheckEvery is how many renderings pass between two reads of the
// browser's memory.
const memoryCheckEvery = 8

// checkMemory retires the browser when it has grown past the cap: every
// memoryCheckEvery renderings, and now when now is set (a page passed the
// cap while it rendered).
func (r *Renderer) checkMemory(in *instance, now bool) {
	if r.opts.MaxMemory == 0 || (r.renders.Add(1)%memoryCheckEvery != 0 && !now) {
		return
	}
	if rss := treeRSS(in.pid); rss > r.opts.MaxMemory {
		r.retire(in, metrics.RestartMemory, fmt.Sprintf("memory %d MiB over the cap of %d MiB", rss>>20, r.opts.MaxMemory>>20))
	}
}

// ownFetch sends a request of p's page with the renderer's own fetcher,
// for a page without Page.Fetch: directly, with the address guard, p's
// user agent, headers and cookie jar.
func (r *Renderer) ownFetch(p Page) func(context.Context, SubRequest) (Answer, error) {
	return func(ctx context.Context, sr SubRequest) (Answer, error) {
		headers := maps.Clone(sr.Headers)
		if headers == nil {
			headers = map[string]string{}
		}
		maps.Copy(headers, p.Headers)
		page, err := r.own.Do(ctx, fetch.Request{URL: sr.URL, Method: sr.Method, Body: sr.Body, AllowPrivate: p.AllowPrivate,
			UserAgent: p.UserAgent, Headers: headers, Jar: p.Jar, AllowNonHTML: true})
		var fe *fetch.Error
		switch {
		case err == nil:
			defer page.Release()
			return AnswerOf(page), nil
		case errors.As(err, &fe) && fe.Status != 0:
			return Answer{Status: fe.Status}, nil
		}
		return Answer{}, err
	}
}

// AnswerOf is the Answer a fetched page makes: its status, header and
// body, and its Content-Type, saying UTF-8 for HTML (the fetch path
// decoded it to UTF-8).
func AnswerOf(page *fetch.Page) Answer {
	ctype := page.ContentType
	if page.HTML {
		ctype = "text/html; charset=utf-8"
	}
	return Answer{Status: page.Status, ContentType: ctype, Header: page.Header, Body: page.Body}
}
