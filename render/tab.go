package render

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/chromedp/cdproto/emulation"
	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// renderIn renders p in a new tab of in, in a browser context of its own,
// and closes the tab.
func (r *Renderer) renderIn(ctx context.Context, in *instance, p Page) (Result, error) {
	u, err := url.Parse(p.URL)
	if err != nil {
		return Result{}, fmt.Errorf("render: %q: %w", p.URL, err)
	}
	tab, closeTab := chromedp.NewContext(in.ctx, chromedp.WithNewBrowserContext())
	stopOnCancel := context.AfterFunc(ctx, closeTab) // the caller gave up: close the tab now
	defer stopOnCancel()
	ic := newInterceptor(tab, p, u)
	defer func() {
		closeTab() // ends the waits of the requests still being admitted
		ic.end()
	}()
	events := chromedp.Events(tab, cdpfetch.RequestPaused)
	ic.wg.Add(1)
	go ic.serve(events)
	if err := ic.setUp(tab); err != nil {
		return Result{}, err
	}

	rctx, cancel := context.WithTimeout(tab, p.Rendering.Timeout)
	defer cancel()
	steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(p.URL)}
	switch w := p.Rendering.WaitFor; {
	case w.CSS != "":
		steps = append(steps, chromedp.WaitReady(chromedp.CSS(w.CSS)))
	case w.Delay > 0:
		steps = append(steps, chromedp.Sleep(w.Delay.Std()))
	}
	if err := chromedp.Do(rctx, steps...); err != nil {
		return ic.result(nil), err
	}
	html, err := chromedp.Run(rctx, chromedp.Evaluate[string](
		`(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + "\n" : "") + document.documentElement.outerHTML`))
	if err != nil {
		return ic.result(nil), err
	}
	return ic.result([]byte(html)), nil
}

// setUp sets the tab's user agent and headers and pauses every request:
// at the request stage (guard, block, admit), and at the response stage
// for the page's own origin (the answer frees its place in the budget).
func (ic *interceptor) setUp(tab context.Context) error {
	if ic.page.UserAgent != "" {
		if _, err := chromedp.Call(tab, emulation.SetUserAgentOverride,
			emulation.SetUserAgentOverrideParams{UserAgent: ic.page.UserAgent}); err != nil {
			return fmt.Errorf("render: set user agent: %w", err)
		}
	}
	if len(ic.page.Headers) > 0 {
		h := network.Headers{}
		for k, v := range ic.page.Headers {
			h[k] = v
		}
		if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
			return fmt.Errorf("render: enable network: %w", err)
		}
		if _, err := chromedp.Call(tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: h}); err != nil {
			return fmt.Errorf("render: set headers: %w", err)
		}
	}
	patterns := []*cdpfetch.RequestPattern{{URLPattern: "*", RequestStage: cdpfetch.RequestStageRequest}}
	if ic.page.Admit != nil {
		patterns = append(patterns, &cdpfetch.RequestPattern{URLPattern: ic.origin + "/*", RequestStage: cdpfetch.RequestStageResponse})
	}
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
