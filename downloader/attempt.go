package downloader

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/politeness"
	"github.com/crawler-dev/crawler/proxy"
)

// attempt sends one request for r under lease, its host's permission, and
// settles what comes of it.
func (d *Downloader) attempt(ctx context.Context, r *Request, lease *politeness.Lease) {
	if r.cancelled() {
		d.release(lease)
		d.finish(ctx, r, Result{Kind: Cancelled})
		return
	}
	u, _ := url.Parse(r.URL) // admit checked it
	if d.mustWaitForProxy(r) {
		// Other requests to its target found no proxy free meanwhile.
		d.release(lease)
		d.waits.join(r, r.target, u, false)
		return
	}
	r.proxyTurn = false
	picked, err := d.pickFor(ctx, r, u)
	if err != nil {
		d.release(lease)
		if !errors.Is(err, errNoProxy) {
			d.log.Warn("pick a proxy; the page waits", zap.String("url", r.URL), zap.Error(err))
		}
		d.waits.join(r, r.target, u, errors.Is(err, errProxyBusy))
		return
	}
	sent := d.send(ctx, r, lease, picked)
	d.reportProxy(picked, sent.page, sent.err, sent.latency)
	d.settle(ctx, r, sent.page, sent.err, picked, Result{Status: sent.status, Latency: sent.latency})
}

// sent is what one attempt came to.
type sent struct {
	page    *fetch.Page
	err     error
	status  int // the site's status, 0 for none
	latency time.Duration
}

// pickFor is the proxy r goes through: the one its wait for a proxy
// picked for it, or a new pick.
func (d *Downloader) pickFor(ctx context.Context, r *Request, u *url.URL) (*proxy.Picked, error) {
	if p := r.picked; p != nil {
		r.picked = nil
		return p, nil
	}
	return d.pickProxy(ctx, r.Job, u, r.excluded)
}

// send makes one attempt at r, through picked when not nil, keeping its
// host lease for as long as it runs, and tells the host's budget how it
// went. A ban page (the job's ban_text) comes back as an error.
func (d *Downloader) send(ctx context.Context, r *Request, lease *politeness.Lease, picked *proxy.Picked) sent {
	var via *url.URL
	if picked != nil {
		via = picked.URL()
	}
	fctx := ctx
	if r.Ctx != nil {
		fctx = r.Ctx
	}
	r.tries++
	m := d.deps.Metrics.Fetch()
	m.InFlight(1)
	d.keeper.Hold(lease)
	start := time.Now()
	page, err := d.deps.Fetcher.Do(fctx, r.Job.request(r, via))
	latency := time.Since(start)
	d.keeper.Drop(lease)
	m.InFlight(-1)
	status, retryAfter := answer(page, err)
	m.Observe(r.host, status, bodyBytes(page), latency, err)
	d.logRequest(r, picked, status, page, latency, err)
	d.reports.Done(lease, status, retryAfter)
	if err == nil {
		if banErr := r.Job.banPage(r.URL, page); banErr != nil {
			page.Release()
			page, err = nil, banErr
		}
	}
	return sent{page: page, err: err, status: status, latency: latency}
}

// logRequest logs one attempt at debug level.
func (d *Downloader) logRequest(r *Request, picked *proxy.Picked, status int, page *fetch.Page, latency time.Duration, err error) {
	ce := d.log.Check(zap.DebugLevel, "request")
	if ce == nil {
		return
	}
	fields := []zap.Field{zap.String("url", r.URL), zap.String("job", r.Job.Name), zap.Int("status", status),
		zap.Int64("bytes", bodyBytes(page)), zap.Duration("latency", latency), zap.Int("try", r.tries)}
	if picked != nil {
		fields = append(fields, zap.String("proxy", picked.Proxy.Redacted()))
	}
	if err != nil {
		fields = append(fields, zap.Error(err))
	}
	ce.Write(fields...)
}

// settle decides what comes of one attempt: the page is done, or it waits
// to be tried again.
func (d *Downloader) settle(ctx context.Context, r *Request, page *fetch.Page, err error, picked *proxy.Picked, res Result) {
	var fe *fetch.Error
	errors.As(err, &fe)
	switch {
	case err == nil:
		res.Kind, res.Page = Fetched, page
	case r.cancelled():
		res.Kind = Cancelled
	case errors.Is(err, fetch.ErrNotHTML):
		res.Kind, res.Err = NotHTML, err
	case errors.Is(err, fetch.ErrOffsiteRedirect):
		res.Kind, res.Err = Offsite, err
	case fe != nil && fe.ProxyFault && r.proxied < d.opts.MaxProxyFaults:
		r.tries-- // the proxy failed, not the page: another proxy, at once
		r.proxied++
		r.excluded = append(r.excluded, picked.ID())
		d.later(r, 0)
		return
	case picked != nil && refused(fe) && r.tries <= r.Job.Spec.MaxRetries:
		// The site refused the proxy (banned now for the host), not the
		// page: another proxy, at once, as a retry.
		d.deps.Metrics.Retried(1)
		r.excluded = append(r.excluded, picked.ID())
		d.later(r, 0)
		return
	case fetch.IsTransient(err) && r.tries <= r.Job.Spec.MaxRetries:
		d.deps.Metrics.Retried(1)
		if picked != nil {
			r.excluded = append(r.excluded, picked.ID()) // a retry goes through another proxy
		}
		d.later(r, d.backoff(r.tries, fe))
		return
	default:
		res.Kind, res.Err, res.Transient = Failed, err, fetch.IsTransient(err)
		d.deps.Metrics.Failed(failureKind(fe))
	}
	d.finish(ctx, r, res)
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

// backoff is how long the tries'th failed attempt waits: exponential from
// RetryBase with jitter, capped at RetryMax, or the site's Retry-After
// when longer.
func (d *Downloader) backoff(tries int, fe *fetch.Error) time.Duration {
	wait := d.opts.RetryBase << min(tries-1, 20)
	wait = min(wait, d.opts.RetryMax)
	wait = wait/2 + time.Duration(rand.Int64N(int64(wait/2)+1))
	if fe != nil && fe.RetryAfter > wait {
		wait = fe.RetryAfter
	}
	return wait
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

// release gives a lease back unused.
func (d *Downloader) release(lease *politeness.Lease) {
	d.reports.Done(lease, 0, 0) // no answer, no feedback: batched with the others
}

// reportProxy feeds the attempt's outcome back to the proxy's score.
func (d *Downloader) reportProxy(picked *proxy.Picked, page *fetch.Page, err error, latency time.Duration) {
	if picked == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if rerr := d.pool.Report(ctx, *picked, proxyOutcome(page, err, latency)); rerr != nil {
		d.log.Warn("report a proxy's outcome", zap.String("proxy", picked.Proxy.Redacted()), zap.Error(rerr))
	}
}

// proxyOutcome is what an attempt says about its proxy.
func proxyOutcome(page *fetch.Page, err error, latency time.Duration) proxy.Outcome {
	var fe *fetch.Error
	switch {
	case err == nil:
		return proxy.StatusOutcome(page.Status, latency)
	case errors.Is(err, ErrBanPage):
		return proxy.Banned(0)
	case errors.Is(err, fetch.ErrNotHTML), errors.Is(err, fetch.ErrOffsiteRedirect):
		return proxy.Success(latency) // the proxy brought the answer
	case !errors.As(err, &fe):
		return proxy.TargetFault()
	case fe.ProxyFault && isTimeout(err):
		return proxy.Timeout()
	case fe.ProxyFault:
		return proxy.ProxyFault(faultReason(fe))
	case fe.Status != 0:
		return proxy.StatusOutcome(fe.Status, latency)
	case isTimeout(err):
		return proxy.Timeout()
	}
	return proxy.TargetFault()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// faultReason is a short reason for a proxy's eviction; fetch errors never
// carry a proxy's credentials.
func faultReason(fe *fetch.Error) string {
	msg := fe.Error()
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return fmt.Sprintf("proxy fault: %s", msg)
}
