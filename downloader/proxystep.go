package downloader

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/proxy"
)

// waitForPool is step 2 of fetchPage: a job that requires proxies waits
// while the pool holds none, before it asks anything of the site (its
// robots.txt included) directly.
func (d *Downloader) waitForPool(ctx context.Context, r *Request, u *url.URL) error {
	for r.Job.Spec.Proxy == jobspec.ProxyRequire && d.counts.none(ctx, d.pool) {
		if _, err := d.waits.waitAny(ctx, u); err != nil {
			return err
		}
	}
	return nil
}

// mustWaitForProxy reports whether r must wait for a proxy without asking:
// its job requires one and other requests to its target wait already.
func (d *Downloader) mustWaitForProxy(r *Request) bool {
	return r.Job.Spec.Proxy == jobspec.ProxyRequire && d.waits.waiting(r.target)
}

// pickFor picks the proxy r goes through, or nil to go direct;
// errNoProxy when its job requires one and none is free.
func (d *Downloader) pickFor(ctx context.Context, r *Request, u *url.URL) (*proxy.Picked, error) {
	p, err := d.pickProxy(ctx, r.Job, u, r.excluded)
	if err != nil && !errors.Is(err, errNoProxy) {
		d.log.Warn("pick a proxy; the page waits", zap.String("url", r.URL), zap.Error(err))
	}
	return p, err
}

// isBusy reports a pick that failed only because every proxy that could
// serve the request is at its cap: a slot frees soon.
func isBusy(err error) bool { return errors.Is(err, errProxyBusy) }

// errDropped is the outcome of a proxy picked for a page that never used
// it (the page was given up): nobody's fault, and its slot is freed.
var errDropped = errors.New("picked proxy not used")

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
