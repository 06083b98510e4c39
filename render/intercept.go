package render

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/crawler-dev/crawler/fetch"
)

// interceptor decides each request a tab's page makes (see the package
// comment) and keeps what it decided.
type interceptor struct {
	tab    context.Context // the page's: its waits end with it
	cdp    context.Context // the tab's, for answers: a request is answered even after its page ended
	page   Page
	send   func(context.Context, SubRequest) (Answer, error) // Page.Fetch, or the renderer's own fetch
	frame  cdp.FrameID                                       // the tab's main frame
	doc    string                                            // the document's URL, without fragment
	host   string                                            // the page's host[:port]
	failed func(error)                                       // ends the page's waits with the error
	wg     sync.WaitGroup

	mu       sync.Mutex
	served   bool // the document was served
	requests int
	blocked  []string
	refused  []string
	inFlight int       // requests being decided or sent
	lastBusy time.Time // when inFlight last changed
	navErr   error     // the main frame's navigation away that failed
}

func newInterceptor(page, tab context.Context, p Page, u *url.URL, send func(context.Context, SubRequest) (Answer, error),
	failed func(error)) *interceptor {
	ic := &interceptor{tab: page, cdp: tab, page: p, send: send, doc: withoutFragment(p.URL), host: u.Host, failed: failed,
		lastBusy: time.Now()}
	if c := chromedp.FromContext(tab); c != nil && c.Target != nil {
		ic.frame = cdp.FrameID(c.Target.TargetID) // a page target's main frame has the target's id
	}
	return ic
}

// handle decides one paused request. None goes to the network from the
// browser: each is answered here, by the document, by the fetch path, or
// with an error (the browser's own connections go nowhere: seal.go).
func (ic *interceptor) handle(ev cdpfetch.EventRequestPaused) {
	ic.busy(1)
	defer ic.busy(-1)
	if ev.ResponseStatusCode != 0 || ev.ResponseErrorReason != "" {
		ic.continueRequest(ev.RequestID) // no response stage is paused; never sent by the browser anyway
		return
	}
	raw := ev.Request.URL
	switch {
	case ev.ResourceType == network.ResourceTypeDocument && withoutFragment(raw) == ic.doc && ic.takeDocument():
		ic.fulfillDocument(ev.RequestID)
		return
	case ev.ResourceType == network.ResourceTypeOther && strings.HasSuffix(raw, "/favicon.ico"):
		ic.fail(ev.RequestID, network.ErrorReasonBlockedByClient) // the browser's, not the page's
		return
	case blockedType(ev.ResourceType, ic.page.Rendering.Block):
		ic.note(&ic.blocked, raw)
		ic.fail(ev.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err == nil && (u.Scheme == "data" || u.Scheme == "blob"):
		ic.continueRequest(ev.RequestID) // answered by the browser from memory
		return
	case err != nil || (u.Scheme != "http" && u.Scheme != "https"):
		ic.refuse(ev, raw, network.ErrorReasonBlockedByClient, fmt.Errorf("not an http(s) URL"))
		return
	}
	if err := fetch.CheckHost(ic.tab, u.Hostname(), ic.page.AllowPrivate); err != nil {
		reason := network.ErrorReasonNameNotResolved
		if errors.Is(err, fetch.ErrBlockedAddress) {
			reason = network.ErrorReasonAddressUnreachable
		}
		ic.refuse(ev, raw, reason, fmt.Errorf("refused by the address guard: %w", err))
		return
	}
	var done func(int)
	if strings.EqualFold(u.Host, ic.host) && ic.page.Admit != nil {
		if done, err = ic.page.Admit(ic.tab, raw); err != nil {
			ic.refuse(ev, raw, network.ErrorReasonBlockedByClient, err)
			return
		}
	}
	ic.mu.Lock()
	ic.requests++
	ic.mu.Unlock()
	ic.fetchFor(ev, u, done)
}

// busy counts a request that begins (1) or ends (-1) being decided and
// sent, for waitQuiet.
func (ic *interceptor) busy(d int) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	ic.inFlight += d
	ic.lastBusy = time.Now()
}

// waitQuiet waits until no request of the page has been in flight for
// quiet (the network went quiet: what the page's scripts fetched after
// its load event has arrived), or until ctx ends.
func (ic *interceptor) waitQuiet(ctx context.Context, quiet time.Duration) error {
	ic.mu.Lock()
	if ic.inFlight == 0 {
		ic.lastBusy = time.Now() // the load event: a script may ask for more just after it
	}
	ic.mu.Unlock()
	tick := time.NewTicker(quiet / 10)
	defer tick.Stop()
	for {
		ic.mu.Lock()
		idle := ic.inFlight == 0 && time.Since(ic.lastBusy) >= quiet
		ic.mu.Unlock()
		if idle {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// refuse fails a request the crawler does not send, and notes it; a
// navigation of the main frame that is refused fails the rendering.
func (ic *interceptor) refuse(ev cdpfetch.EventRequestPaused, raw string, reason network.ErrorReason, why error) {
	ic.note(&ic.refused, raw)
	ic.fail(ev.RequestID, reason)
	ic.navigationFailed(ev, raw, why)
}

// navigationFailed fails the rendering when ev is a navigation of the
// tab's main frame (the page went elsewhere) that got no answer: the tab
// would show the browser's error page in place of the page.
func (ic *interceptor) navigationFailed(ev cdpfetch.EventRequestPaused, raw string, why error) {
	if ev.ResourceType != network.ResourceTypeDocument || (ic.frame != "" && ev.FrameID != ic.frame) {
		return
	}
	err := fmt.Errorf("%w: %s: %w", ErrNavigation, raw, why)
	ic.mu.Lock()
	if ic.navErr == nil {
		ic.navErr = err
	}
	ic.mu.Unlock()
	ic.failed(err)
}

// navigation is the failed navigation of the main frame, if any.
func (ic *interceptor) navigation() error {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return ic.navErr
}

// takeDocument reports whether the document is still to be served, and
// marks it served.
func (ic *interceptor) takeDocument() bool {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.served {
		return false
	}
	ic.served = true
	return true
}

// fulfillDocument serves the fetched document to the tab.
func (ic *interceptor) fulfillDocument(id cdpfetch.RequestID) {
	ctype := ic.page.ContentType
	if ctype == "" || strings.HasPrefix(ctype, "text/html") {
		ctype = "text/html; charset=utf-8" // fetch decoded the body to UTF-8
	}
	status := ic.page.Status
	if status < 200 || status > 299 {
		status = 200
	}
	answer(ic.cdp, cdpfetch.FulfillRequest, cdpfetch.FulfillRequestParams{RequestID: id, ResponseCode: int64(status),
		ResponseHeaders: []*cdpfetch.HeaderEntry{{Name: "Content-Type", Value: ctype}}, Body: ic.page.Body})
}

// end waits for the handlers of the page's requests.
func (ic *interceptor) end() { ic.wg.Wait() }

func (ic *interceptor) note(list *[]string, raw string) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	*list = append(*list, raw)
}

func (ic *interceptor) continueRequest(id cdpfetch.RequestID) {
	answer(ic.cdp, cdpfetch.ContinueRequest, cdpfetch.ContinueRequestParams{RequestID: id})
}

func (ic *interceptor) fail(id cdpfetch.RequestID, reason network.ErrorReason) {
	failRequest(ic.cdp, id, reason)
}

// failRequest answers a paused request with a network error.
func failRequest(tab context.Context, id cdpfetch.RequestID, reason network.ErrorReason) {
	answer(tab, cdpfetch.FailRequest, cdpfetch.FailRequestParams{RequestID: id, ErrorReason: reason})
}

// answerWithin bounds the answer to a paused request: a browser that
// does not take it (its tab crashed, it hangs) must not hold the
// rendering's end (interceptor.end) for ever.
const answerWithin = 10 * time.Second

// answer sends the answer cmd to a paused request of tab, within
// answerWithin; a browser that did not take it fails the page by itself.
func answer[P any](tab context.Context, cmd cdp.Command[P, cdp.Empty], params P) {
	ctx, cancel := context.WithTimeout(tab, answerWithin)
	defer cancel()
	_, _ = chromedp.Call(ctx, cmd, params)
}

// result is what the tab came to, with html.
func (ic *interceptor) result(html []byte) Result {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return Result{HTML: html, Requests: ic.requests, Blocked: slicesClone(ic.blocked), Refused: slicesClone(ic.refused)}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
