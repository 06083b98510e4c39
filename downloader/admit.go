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
// first, under the gate, since the first ask of an origin fetches the file)
// and, for a job that requires proxies, once the pool has one.
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
	r.host = politeness.HostOf(u)
	if wait := d.proxyWait(ctx, r); wait > 0 {
		d.later(r, wait)
		return
	}
	decision, wait, err := d.askRobots(r)
	switch {
	case err != nil:
		d.log.Warn("robots.txt check failed; the page waits", zap.String("url", r.URL), zap.Error(err))
		d.later(r, time.Second)
	case wait > 0:
		d.robotsUnavailable(ctx, r, wait)
	case !decision.Allowed:
		d.deps.Metrics.Robots().Disallowed(r.host)
		d.finish(ctx, r, Result{Kind: Disallowed, Err: fmt.Errorf("fetch %s: disallowed by robots.txt", r.URL)})
	default:
		d.queue.Push(r.host, r.Job.rule(decision), r)
	}
}

// robotsUnavailable handles a page whose robots.txt cannot be had: the
// site answers it with 5xx or 429, or cannot be reached (RFC 9309 then
// asks to disallow everything for a while). The page waits its backoff and
// asks again, as a failed request would, and fails once its retries run
// out, with that reason, rather than wait for ever on a dead site.
func (d *Downloader) robotsUnavailable(ctx context.Context, r *Request, retryAfter time.Duration) {
	r.unknown++
	if r.unknown > r.Job.Spec.MaxRetries {
		u, _ := url.Parse(r.URL)
		err := fmt.Errorf("fetch %s: robots.txt of %s is unavailable (the site answers 5xx or 429, or cannot be reached)",
			r.URL, robots.Origin(u))
		d.finish(ctx, r, Result{Kind: Failed, Err: err, Transient: true})
		return
	}
	d.later(r, min(retryAfter, d.backoff(r.unknown, nil)))
}

// askRobots asks the job's robots.txt about r; wait > 0 when the file
// cannot be had yet (the site answers 5xx, another process is fetching
// it), so r must wait rather than be dropped.
func (d *Downloader) askRobots(r *Request) (robots.Decision, time.Duration, error) {
	if r.Job.robots == nil {
		return robots.Decision{Allowed: true}, 0, nil
	}
	d.gate <- struct{}{}
	defer func() { <-d.gate }()
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

// proxyWait is how long r must wait for its job's proxies: a job that
// requires them waits while the pool is empty, before it asks anything of
// the site (robots.txt included) directly.
func (d *Downloader) proxyWait(ctx context.Context, r *Request) time.Duration {
	if r.Job.Spec.Proxy != cluster.ProxyRequire {
		return 0
	}
	if d.proxies.none(ctx, d.pool) {
		return d.opts.ProxyWait
	}
	return 0
}
