package downloader

import (
	"context"
	"errors"
	"fmt"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/render"
)

// ErrNoRenderer means a page's kind is rendered and this process has no
// renderer.
var ErrNoRenderer = errors.New("render: this process renders no pages (it was started without a browser)")

// render is step 6b of fetchPage, for a page whose kind says render: the
// fetched document is loaded in the process's headless browser, and the
// DOM its scripts leave replaces the body. The requests the page makes
// to its own host ask robots.txt and wait for places in the host's
// budget, as the document did (admit); the document's own place was
// given back with its answer, so a host with a cap of one cannot
// deadlock. A rendering that times out or whose browser dies is a
// transient failure, retried like a timeout; one that cannot start a
// browser fails the page.
func (d *Downloader) render(ctx context.Context, r *Request, a attempt) attempt {
	if a.err != nil || a.page == nil || a.page.NotModified || !a.page.HTML {
		return a
	}
	rendering, ok := r.Job.Spec.RenderOf(r.Kind)
	if !ok {
		return a
	}
	if d.deps.Renderer == nil {
		return failRender(r, a, ErrNoRenderer, false)
	}
	rctx := context.WithoutCancel(ctx)
	if r.Ctx != nil {
		rctx = r.Ctx
	}
	s := r.Job.Spec
	res, err := d.deps.Renderer.Render(rctx, render.Page{URL: a.page.URL, Status: a.page.Status,
		ContentType: a.page.ContentType, Body: a.page.Body, Rendering: rendering, AllowPrivate: s.AllowPrivateNetworks,
		UserAgent: s.UserAgent, Headers: s.Headers, Admit: d.admit(r)})
	d.deps.Metrics.Rendered(res.Took, renderResult(err))
	if err != nil {
		transient := errors.Is(err, render.ErrTimeout) || errors.Is(err, render.ErrBrowserDied)
		return failRender(r, a, err, transient)
	}
	a.page.Body, a.rendered = res.HTML, true
	return a
}

// failRender makes a the failed attempt err says.
func failRender(r *Request, a attempt, err error, transient bool) attempt {
	a.page.Release()
	a.page, a.err = nil, &fetch.Error{URL: r.URL, Transient: transient, Err: err}
	return a
}

// renderResult is a rendering's result label for the metrics.
func renderResult(err error) string {
	switch {
	case err == nil:
		return metrics.RenderOK
	case errors.Is(err, render.ErrTimeout):
		return metrics.RenderTimeout
	case errors.Is(err, render.ErrBrowserDied), errors.Is(err, render.ErrNoBrowser):
		return metrics.RenderBrowser
	}
	return metrics.RenderError
}

// admit lets a request a rendered page makes to its own host go the way
// the page went: robots.txt must allow it, and it takes a place in the
// host's budget, given back with the answer's status.
func (d *Downloader) admit(r *Request) func(ctx context.Context, rawURL string) (func(status int), error) {
	return func(ctx context.Context, rawURL string) (func(int), error) {
		dec, err := d.askRobots(ctx, &Request{URL: rawURL, Job: r.Job})
		switch {
		case err != nil:
			return nil, fmt.Errorf("robots.txt for %s: %w", rawURL, err)
		case !dec.Allowed && !dec.Temporary:
			d.deps.Metrics.Robots().Disallowed(r.host)
			return nil, fmt.Errorf("fetch %s: disallowed by robots.txt", rawURL)
		}
		pass, err := d.gates.Enter(ctx, r.host, r.Job.rule(dec))
		if err != nil {
			return nil, fmt.Errorf("host budget for %s: %w", rawURL, err)
		}
		return func(status int) { pass.Done(status, 0) }, nil
	}
}
