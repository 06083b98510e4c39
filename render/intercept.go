package render

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"

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
	doc    string // the document's URL, without fragment
	host   string // the page's host[:port]
	origin string // scheme://host[:port]
	wg     sync.WaitGroup

	mu       sync.Mutex
	served   bool                             // the document was served
	held     map[cdpfetch.RequestID]func(int) // budget places held until the answer
	requests int
	blocked  []string
	refused  []string
}

func newInterceptor(page, tab context.Context, p Page, u *url.URL) *interceptor {
	return &interceptor{tab: page, cdp: tab, page: p, doc: withoutFragment(p.URL), host: u.Host,
		origin: u.Scheme + "://" + u.Host, held: map[cdpfetch.RequestID]func(int){}}
}

// handle decides one paused request.
func (ic *interceptor) handle(ev cdpfetch.EventRequestPaused) {
	if ev.ResponseStatusCode != 0 || ev.ResponseErrorReason != "" {
		ic.answered(ev.RequestID, int(ev.ResponseStatusCode))
		ic.continueRequest(ev.RequestID)
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
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		ic.continueRequest(ev.RequestID) // data:, blob: and the like never reach the network
		return
	}
	if err := fetch.CheckHost(ic.tab, u.Hostname(), ic.page.AllowPrivate); err != nil {
		ic.note(&ic.refused, raw)
		reason := network.ErrorReasonNameNotResolved
		if errors.Is(err, fetch.ErrBlockedAddress) {
			reason = network.ErrorReasonAddressUnreachable
		}
		ic.fail(ev.RequestID, reason)
		return
	}
	var done func(int)
	if strings.EqualFold(u.Host, ic.host) && ic.page.Admit != nil {
		if done, err = ic.page.Admit(ic.tab, raw); err != nil {
			ic.note(&ic.refused, raw)
			ic.fail(ev.RequestID, network.ErrorReasonBlockedByClient)
			return
		}
	}
	ic.mu.Lock()
	ic.requests++
	ic.mu.Unlock()
	if ic.page.Fetch != nil {
		ic.fetchFor(ev, u, done)
		return
	}
	if done != nil {
		ic.hold(ev.RequestID, done)
	}
	ic.continueRequest(ev.RequestID)
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
	_, _ = chromedp.Call(ic.cdp, cdpfetch.FulfillRequest, cdpfetch.FulfillRequestParams{RequestID: id, ResponseCode: int64(status),
		ResponseHeaders: []*cdpfetch.HeaderEntry{{Name: "Content-Type", Value: ctype}}, Body: ic.page.Body})
}

// hold keeps a request's place in the budget until its answer.
func (ic *interceptor) hold(id cdpfetch.RequestID, done func(int)) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	ic.held[id] = done
}

// answered gives back the place of a request whose answer came.
func (ic *interceptor) answered(id cdpfetch.RequestID, status int) {
	ic.mu.Lock()
	done := ic.held[id]
	delete(ic.held, id)
	ic.mu.Unlock()
	if done != nil {
		done(status)
	}
}

// end waits for the handlers and gives back every place still held (the
// tab closed before their answers).
func (ic *interceptor) end() {
	ic.wg.Wait()
	ic.mu.Lock()
	held := ic.held
	ic.held = map[cdpfetch.RequestID]func(int){}
	ic.mu.Unlock()
	for _, done := range held {
		done(0)
	}
}

func (ic *interceptor) note(list *[]string, raw string) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	*list = append(*list, raw)
}

func (ic *interceptor) continueRequest(id cdpfetch.RequestID) {
	_, _ = chromedp.Call(ic.cdp, cdpfetch.ContinueRequest, cdpfetch.ContinueRequestParams{RequestID: id})
}

func (ic *interceptor) fail(id cdpfetch.RequestID, reason network.ErrorReason) {
	failRequest(ic.cdp, id, reason)
}

// failRequest answers a paused request with a network error.
func failRequest(tab context.Context, id cdpfetch.RequestID, reason network.ErrorReason) {
	_, _ = chromedp.Call(tab, cdpfetch.FailRequest, cdpfetch.FailRequestParams{RequestID: id, ErrorReason: reason})
}

// result is what the tab came to, with html.
func (ic *interceptor) result(html []byte) Result {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return Result{HTML: html, Requests: ic.requests, Blocked: slicesClone(ic.blocked), Refused: slicesClone(ic.refused)}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
