package downloader

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"

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
	if r.ctx != nil {
		rctx = r.ctx
	}
	s := r.Job.Spec
	res, err := d.deps.Renderer.Render(rctx, render.Page{URL: a.page.URL, Status: a.page.Status,
		ContentType: a.page.ContentType, Body: a.page.Body, Rendering: rendering, AllowPrivate: s.AllowPrivateNetworks,
		UserAgent: s.UserAgent, Headers: s.Headers, Admit: d.admit(r), Fetch: d.subFetch(r.Job), Jar: r.Job.jar})
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
		dec, err := d.askRobots(ctx, r.Job, rawURL)
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

// subFetch sends a request a rendered page makes the way the job fetches
// its pages, in place of the browser: through the job's proxy choice
// (waiting for a proxy, within the rendering's timeout, when the job
// requires one), the address guard, its cookie jar, headers and limits.
// An answer that is not 2xx is handed to the page as such; a 2xx answer
// with the site's headers (render keeps those the page may have).
func (d *Downloader) subFetch(j *Job) func(ctx context.Context, sr render.SubRequest) (render.Answer, error) {
	return func(ctx context.Context, sr render.SubRequest) (render.Answer, error) {
		u, err := url.Parse(sr.URL)
		if err != nil {
			return render.Answer{}, fmt.Errorf("rendered page's request %q: %w", sr.URL, err)
		}
		picked, err := d.pickWaiting(ctx, j, u)
		if err != nil {
			return render.Answer{}, fmt.Errorf("rendered page's request %s: %w", sr.URL, err)
		}
		req := j.subRequest(sr)
		if picked != nil {
			req.Proxy = picked.URL()
		}
		page, err := d.deps.Fetcher.Do(ctx, req)
		d.reportProxy(picked, page, err, 0)
		var fe *fetch.Error
		switch {
		case err == nil:
			defer page.Release()
			return render.AnswerOf(page), nil
		case errors.As(err, &fe) && fe.Status != 0 && !fe.ProxyFault:
			return render.Answer{Status: fe.Status}, nil
		}
		return render.Answer{}, err
	}
}

// subRequest is the fetch of a rendered page's request: the page's
// headers, with the job's over them.
func (j *Job) subRequest(sr render.SubRequest) fetch.Request {
	s := j.Spec
	headers := maps.Clone(sr.Headers)
	if headers == nil {
		headers = map[string]string{}
	}
	maps.Copy(headers, s.Headers)
	return fetch.Request{URL: sr.URL, Method: sr.Method, Body: sr.Body, AllowPrivate: s.AllowPrivateNetworks,
		UserAgent: s.UserAgent, Headers: headers, Jar: j.jar, MaxBodyBytes: s.MaxBodyBytes, Timeout: s.Timeout.Std(),
		AllowNonHTML: true}
}
