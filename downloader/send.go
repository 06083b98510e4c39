package downloader

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/politeness"
	"github.com/crawler-dev/crawler/proxy"
	"github.com/crawler-dev/crawler/render"
)

// attempt is what one request sent for a page came to.
type attempt struct {
	page    *fetch.Page
	err     error
	status  int // the site's status, 0 for none
	latency time.Duration
	// rendered is true when page's body is the DOM its rendering left.
	rendered bool
}

// send is step 6 of fetchPage: one attempt at r, through picked when not
// nil, on the worker onWorker holds for it and under the host's pass,
// which it gives back with the answer; the proxy's score hears the
// outcome too. The request runs to its end even when the Downloader
// stops; only the caller's context cuts it short. A ban page (the job's ban_text) comes
// back as an error.
func (d *Downloader) send(ctx context.Context, r *Request, pass *politeness.Pass, picked *proxy.Picked) attempt {
	var via *url.URL
	if picked != nil {
		via = picked.URL()
	}
	fctx := context.WithoutCancel(ctx)
	if r.ctx != nil {
		fctx = r.ctx
	}
	if !r.started && r.Started != nil {
		r.started = true
		r.Started()
	}
	r.tries++
	m := d.deps.Metrics.Fetch()
	m.InFlight(1)
	start := time.Now()
	page, err := d.deps.Fetcher.Do(fctx, r.Job.request(r, via))
	latency := time.Since(start)
	m.InFlight(-1)
	status, retryAfter := answer(page, err)
	pass.Done(status, retryAfter)
	m.Observe(r.host, status, bodyBytes(page), latency, err)
	d.logRequest(r, pass, picked, status, page, latency, err)
	if err == nil {
		if banErr := r.Job.banPage(r.at, page); banErr != nil {
			page.Release()
			page, err = nil, banErr
		}
	}
	d.reportProxy(picked, page, err, latency)
	return attempt{page: page, err: err, status: status, latency: latency}
}

// logRequest logs one attempt at debug level.
func (d *Downloader) logRequest(r *Request, pass *politeness.Pass, picked *proxy.Picked, status int, page *fetch.Page, latency time.Duration, err error) {
	ce := d.log.Check(zap.DebugLevel, "request")
	if ce == nil {
		return
	}
	fields := []zap.Field{zap.String("url", r.at), zap.String("job", r.Job.Name), zap.Int("status", status),
		zap.Int64("bytes", bodyBytes(page)), zap.Duration("latency", latency), zap.Int("try", r.tries)}
	if pass.Waited > 0 {
		fields = append(fields, zap.Duration("host_wait", pass.Waited), zap.String("host_wait_reason", string(pass.Reason)))
	}
	if picked != nil {
		fields = append(fields, zap.String("proxy", picked.Proxy.Redacted()))
	}
	if len(r.chain) > 0 {
		fields = append(fields, zap.String("page", r.URL), zap.Int("hop", len(r.chain)))
	}
	if err != nil {
		fields = append(fields, zap.Error(err))
	}
	ce.Write(fields...)
}

// settle is step 7 of fetchPage: it decides what one attempt comes to:
// the page's Result and done, or how long to wait before it is tried
// again.
func (d *Downloader) settle(r *Request, a attempt, picked *proxy.Picked) (res Result, wait time.Duration, done bool) {
	var fe *fetch.Error
	errors.As(a.err, &fe)
	res = Result{Status: a.status, Latency: a.latency}
	switch {
	case a.err == nil:
		res.Kind, res.Page, res.Rendered = Fetched, a.page, a.rendered
	case r.cancelled():
		res.Kind = Cancelled
	case errors.Is(a.err, fetch.ErrNotHTML):
		res.Kind, res.Err = NotHTML, a.err
	case errors.Is(a.err, fetch.ErrOffsiteRedirect):
		res.Kind, res.Err = Offsite, a.err
	case fe != nil && fe.ProxyFault && r.proxied < d.opts.MaxProxyFaults:
		r.tries-- // the proxy failed, not the page: another proxy, at once
		r.proxied++
		r.excluded = append(r.excluded, picked.ID())
		return res, 0, false
	case picked != nil && refused(fe) && r.tries <= r.Job.Spec.MaxRetries:
		// The site refused the proxy (banned now for the host), not the
		// page: another proxy, at once, as a retry.
		d.deps.Metrics.Retried(1)
		r.excluded = append(r.excluded, picked.ID())
		return res, 0, false
	case fetch.IsTransient(a.err) && r.tries <= r.Job.Spec.MaxRetries:
		d.deps.Metrics.Retried(1)
		if picked != nil {
			r.excluded = append(r.excluded, picked.ID()) // a retry goes through another proxy
		}
		return res, d.opts.Backoff(r.tries, fe), false
	default:
		res.Kind, res.Err, res.Transient = Failed, a.err, fetch.IsTransient(a.err)
		d.deps.Metrics.Failed(failureKind(fe))
	}
	return res, 0, true
}

// refused reports the answers that say a site refuses a proxy rather than
// a page: 403, 429 and ban pages.
func refused(fe *fetch.Error) bool {
	return fe != nil && (fe.Status == http.StatusForbidden || fe.Status == http.StatusTooManyRequests ||
		errors.Is(fe, ErrBanPage))
}

// failureKind is the failure's kind for the metrics: http when the site
// answered with an error status, proxy when proxies failed it, else
// transport.
func failureKind(fe *fetch.Error) string {
	switch {
	case fe != nil && errors.Is(fe, render.ErrTimeout):
		return "render_timeout"
	case fe != nil && (errors.Is(fe, render.ErrBrowserDied) || errors.Is(fe, render.ErrNoBrowser) || errors.Is(fe, ErrNoRenderer)):
		return "render"
	case fe != nil && errors.Is(fe, ErrBanPage):
		return "ban"
	case fe != nil && fe.Status != 0:
		return "http"
	case fe != nil && fe.ProxyFault:
		return "proxy"
	}
	return "transport"
}

func bodyBytes(p *fetch.Page) int64 {
	if p == nil {
		return 0
	}
	return int64(len(p.Body))
}

// answer is the status the site sent (0 for none) and its Retry-After.
func answer(page *fetch.Page, err error) (int, time.Duration) {
	if page != nil {
		return page.Status, 0
	}
	var fe *fetch.Error
	if errors.As(err, &fe) && !fe.ProxyFault {
		return fe.Status, fe.RetryAfter
	}
	return 0, 0
}
