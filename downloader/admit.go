package downloader

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/politeness"
	"github.com/crawler-dev/crawler/robots"
)

// admit puts r in its host's queue once robots.txt allows it (asking it
// first: the first ask of an origin fetches the file) and, for a job that
// requires proxies, once the pool has one free for it.
func (d *Downloader) admit(r *Request) {
	ctx := context.Background()
	if r.cancelled() {
		d.finish(ctx, r, Result{Kind: Cancelled})
		return
	}
	u, err := url.Parse(r.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		d.finish(ctx, r, Result{Kind: Failed, Err: fmt.Errorf("fetch %q: not an absolute http(s) URL", r.URL)})
		return
	}
	r.host, r.target = politeness.HostOf(u), targetOf(u)
	if d.waitForPool(ctx, r, u) {
		return
	}
	decision, wait, err := d.askRobots(r)
	switch {
	case err != nil:
		d.log.Warn("robots.txt check failed; the page waits", zap.String("url", r.URL), zap.Error(err))
		d.later(r, time.Second)
	case wait > 0 && decision.Unreachable:
		d.robotsUnreachable(ctx, r, u)
	case wait > 0:
		d.robotsUnavailable(ctx, r, u, wait)
	case !decision.Allowed:
		d.deps.Metrics.Robots().Disallowed(r.host)
		d.finish(ctx, r, Result{Kind: Disallowed, Err: fmt.Errorf("fetch %s: disallowed by robots.txt", r.URL)})
	case d.mustWaitForProxy(r):
		r.robotsSince = time.Time{}
		d.waits.join(r, r.target, u, false) // no lease taken to learn what the others know
	default:
		r.robotsSince = time.Time{}
		d.queue.Push(r.host, r.Job.rule(decision), r)
	}
}

// robotsUnreachable handles a page whose site did not answer for its
// robots.txt at all (refused, reset, timed out, unknown host): the page
// itself would most likely fail the same way, so the wait counts as a
// failed try, with the usual backoff, and the page fails (transient, for
// client retry-failed) once its retries are spent, instead of waiting out
// MaxRobotsWait. A crawl of a site that is down ends in seconds.
func (d *Downloader) robotsUnreachable(ctx context.Context, r *Request, u *url.URL) {
	r.tries++
	if r.tries <= r.Job.Spec.MaxRetries {
		d.deps.Metrics.Retried(1)
		d.later(r, d.backoff(r.tries, nil))
		return
	}
	d.deps.Metrics.Failed("robots")
	err := fmt.Errorf("fetch %s: the site did not answer for robots.txt (%s) in %d tries",
		r.URL, robots.Origin(u), r.tries)
	d.finish(ctx, r, Result{Kind: Failed, Err: err, Transient: true})
}

// robotsUnavailable handles a page whose robots.txt cannot be had: the
// site answers it with 5xx or 429, or cannot be reached (RFC 9309 then
// asks to disallow everything for a while), or another process is
// fetching it. The page waits, outside any worker and without a retry
// charged to it, until the file may be had again (the end of its error
// window, or of the other process's fetch), and asks again; it fails,
// saying why, only once it has waited Options.MaxRobotsWait.
func (d *Downloader) robotsUnavailable(ctx context.Context, r *Request, u *url.URL, retryAfter time.Duration) {
	now := time.Now()
	if r.robotsSince.IsZero() {
		r.robotsSince = now
	}
	left := d.opts.MaxRobotsWait - now.Sub(r.robotsSince)
	if left <= 0 {
		d.deps.Metrics.Failed("robots")
		err := fmt.Errorf("fetch %s: robots.txt of %s has been unavailable for %s (the site answers 5xx or 429, or cannot be reached)",
			r.URL, robots.Origin(u), d.opts.MaxRobotsWait)
		d.finish(ctx, r, Result{Kind: Failed, Err: err, Transient: true})
		return
	}
	d.later(r, min(retryAfter, left))
}

// askRobots asks the job's robots.txt about r; wait > 0 when the file
// cannot be had yet (the site answers 5xx, another process is fetching
// it), so r must wait rather than be dropped.
func (d *Downloader) askRobots(r *Request) (robots.Decision, time.Duration, error) {
	if r.Job.robots == nil {
		return robots.Decision{Allowed: true}, 0, nil
	}
	ctx := r.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	dec, err := r.Job.robots.Check(ctx, r.URL, r.Job.Spec.UserAgent)
	if err != nil {
		return dec, 0, err
	}
	if dec.Temporary {
		return dec, max(dec.RetryAfter, 100*time.Millisecond), nil
	}
	return dec, 0, nil
}

// mustWaitForProxy reports whether r must wait for a proxy without asking:
// its job requires one, and other requests to its target wait already
// (unless their wait let r go to be tried).
func (d *Downloader) mustWaitForProxy(r *Request) bool {
	return r.Job.Spec.Proxy == cluster.ProxyRequire && !r.proxyTurn && r.picked == nil && d.waits.waiting(r.target)
}

// waitForPool makes r wait, and reports true, when its job requires
// proxies and the pool holds none: before it asks anything of the site
// (robots.txt included) directly.
func (d *Downloader) waitForPool(ctx context.Context, r *Request, u *url.URL) bool {
	if r.Job.Spec.Proxy != cluster.ProxyRequire || !d.proxies.none(ctx, d.pool) {
		return false
	}
	d.waits.join(r, anyTarget, u, false)
	return true
}
