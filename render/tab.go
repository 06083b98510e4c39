package render

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// tab is an open tab of a browser instance, in a browser context of its
// own, kept between renderings: opening one costs more than a simple
// page's whole rendering.
type tab struct {
	in    *instance
	ctx   context.Context
	close context.CancelFunc

	mu      sync.Mutex
	current *interceptor // the rendering in progress; nil between renderings
}

// openTab opens a tab in a browser context of its own, and answers its
// paused requests (serve) for as long as it is open.
func openTab(in *instance) (*tab, error) {
	ctx, cancel := chromedp.NewContext(in.ctx, chromedp.WithNewBrowserContext())
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		cancel()
		return nil, fmt.Errorf("render: open a tab: %w", err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: noRTC}); err != nil {
		cancel()
		return nil, fmt.Errorf("render: open a tab: %w", err)
	}
	t := &tab{in: in, ctx: ctx, close: cancel}
	go t.serve(chromedp.Events(ctx, cdpfetch.RequestPaused))
	return t, nil
}

// serve hands each paused request to the rendering in progress, each on a
// goroutine of its own (admitting one may wait for the host's budget),
// and fails those that come between renderings: the browser's own late
// requests for a page already rendered (its favicon) must not reach the
// network but through the fetch path and its proxy.
func (t *tab) serve(events iter.Seq2[cdpfetch.EventRequestPaused, error]) {
	for ev, err := range events {
		if err != nil {
			return
		}
		t.mu.Lock()
		ic := t.current
		if ic != nil {
			ic.wg.Add(1)
		}
		t.mu.Unlock()
		if ic == nil {
			failRequest(t.ctx, ev.RequestID, network.ErrorReasonBlockedByClient)
			continue
		}
		go func() {
			defer ic.wg.Done()
			ic.handle(ev)
		}()
	}
}

// attach makes ic the rendering in progress (nil: none).
func (t *tab) attach(ic *interceptor) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.current = ic
}

// reset leaves the tab blank, without the last page's cookies, for the
// next rendering; false when it cannot. Interception stays on for the
// tab's life: a request the browser makes between renderings (the last
// page's favicon, asked for after its load) is paused and failed (serve),
// where with interception off it would go to the network directly, past
// the fetch path and its proxy.
func (t *tab) reset() bool {
	ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	// Leave the page (its timers and requests stop); the next rendering's
	// navigation waits for its own load, so this one need not.
	if _, err := chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: "about:blank"}); err != nil {
		return false
	}
	_, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{})
	return err == nil
}

// renderIn renders p in t. A rendering that fails leaves t unusable: the
// caller closes it.
func (r *Renderer) renderIn(ctx context.Context, t *tab, p Page) (Result, error) {
	u, err := url.Parse(p.URL)
	if err != nil {
		return Result{}, fmt.Errorf("render: %q: %w", p.URL, err)
	}
	pctx, endPage := context.WithCancelCause(t.ctx)                       // ends the page's waits
	stopOnCancel := context.AfterFunc(ctx, func() { endPage(ctx.Err()) }) // the caller gave up
	defer stopOnCancel()
	send := p.Fetch
	if send == nil {
		send = r.ownFetch(p)
	}
	ic := newInterceptor(pctx, t.ctx, p, u, send, endPage)
	t.attach(ic)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		r.watchMemory(pctx, t.in, endPage)
	}()
	defer func() {
		t.attach(nil) // requests from now on are failed (serve)
		endPage(nil)  // ends the waits of the requests still being admitted, and the watch
		ic.end()
		<-watched
	}()
	if err := ic.setUp(pctx); err != nil {
		return Result{}, err
	}
	if err := loadCookies(pctx, p.Jar, u); err != nil {
		return Result{}, err
	}

	rctx, cancel := context.WithTimeout(pctx, p.Rendering.Timeout)
	defer cancel()
	unsettled, err := ic.wait(rctx, p)
	if err != nil {
		return ic.result(nil), pageError(pctx, err)
	}
	doc, err := chromedp.Run(rctx, chromedp.Evaluate[pageDoc](readDoc))
	switch {
	case err != nil:
		return ic.result(nil), pageError(pctx, err)
	case ic.navigation() != nil:
		return ic.result(nil), ic.navigation()
	case strings.HasPrefix(doc.Href, "chrome-error:"):
		return ic.result(nil), fmt.Errorf("%w: the tab shows the browser's error page", ErrNavigation)
	}
	keepCookies(pctx, p.Jar, u)
	res := ic.result([]byte(doc.HTML))
	res.Unsettled = unsettled
	return res, nil
}

// wait loads the page in the tab and waits until it is to be read: once
// its wait_for matches, or without one once its network went quiet (or,
// when it never does, near the end of rctx, its render_timeout: then
// unsettled is true).
func (ic *interceptor) wait(rctx context.Context, p Page) (unsettled bool, err error) {
	start := time.Now()
	steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(p.URL)}
	switch w := p.Rendering.WaitFor; {
	case w.CSS != "":
		steps = append(steps, chromedp.WaitReady(chromedp.CSS(w.CSS)))
	case w.Delay > 0:
		steps = append(steps, chromedp.Sleep(w.Delay.Std()))
	}
	if err := chromedp.Do(rctx, steps...); err != nil {
		return false, err
	}
	if w := p.Rendering.WaitFor; w.CSS != "" || w.Delay > 0 {
		return false, nil
	}
	qctx, cancel := context.WithDeadline(rctx, start.Add(p.Rendering.Timeout-readReserve(p.Rendering.Timeout)))
	defer cancel()
	if err := ic.waitQuiet(qctx, QuietFor); err != nil {
		if rctx.Err() != nil {
			return false, rctx.Err()
		}
		return true, nil
	}
	return false, nil
}

// readDoc reads where the tab is and its DOM (pageDoc).
const readDoc = `({href: location.href,
  html: (document.doctype ? new XMLSerializer().serializeToString(document.doctype) + "\n" : "") + document.documentElement.outerHTML})`

// pageDoc is what a rendering reads of its tab: where it is (the
// browser's error page is chrome-error:) and its DOM, serialized.
type pageDoc struct {
	Href string `json:"href"`
	HTML string `json:"html"`
}

// pageError is err, or why the page was stopped (a failed navigation, the
// memory cap) when it was.
func pageError(page context.Context, err error) error {
	if cause := context.Cause(page); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// readReserve is the part of a rendering's timeout kept for reading the
// page once waiting for its network to go quiet ended.
func readReserve(timeout time.Duration) time.Duration {
	return min(timeout/10, 2*time.Second)
}

// setUp sets the tab's user agent and headers and pauses every request,
// to be decided and answered by the interceptor.
func (ic *interceptor) setUp(tab context.Context) error {
	if ic.page.UserAgent != "" {
		if _, err := chromedp.Call(tab, emulation.SetUserAgentOverride,
			emulation.SetUserAgentOverrideParams{UserAgent: ic.page.UserAgent}); err != nil {
			return fmt.Errorf("render: set user agent: %w", err)
		}
	}
	h := network.Headers{} // every time: the tab's last page may have had others
	for k, v := range ic.page.Headers {
		h[k] = v
	}
	if _, err := chromedp.Call(tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: h}); err != nil {
		return fmt.Errorf("render: set headers: %w", err)
	}
	patterns := []*cdpfetch.RequestPattern{{URLPattern: "*", RequestStage: cdpfetch.RequestStageRequest}}
	if _, err := chromedp.Call(tab, cdpfetch.Enable, cdpfetch.EnableParams{Patterns: patterns}); err != nil {
		return fmt.Errorf("render: enable interception: %w", err)
	}
	return nil
}

// blockedType reports whether a resource type is one of block's.
func blockedType(t network.ResourceType, block []string) bool {
	var name string
	switch t {
	case network.ResourceTypeImage:
		name = "image"
	case network.ResourceTypeFont:
		name = "font"
	case network.ResourceTypeMedia:
		name = "media"
	case network.ResourceTypeStylesheet:
		name = "stylesheet"
	default:
		return false
	}
	return slices.Contains(block, name)
}

// withoutFragment is raw without its #fragment.
func withoutFragment(raw string) string {
	s, _, _ := strings.Cut(raw, "#")
	return s
}
