package downloader

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/politeness"
	"github.com/crawler-dev/crawler/robots"
)

// allowed is step 3 of fetchPage: it asks the job's robots.txt about the
// URL r fetches now (the page's, or a redirect's target) and returns the
// host's rule, with its Crawl-delay, once the file allows it; or the
// page's Result when it ends here (disallowed, or the file could not be
// had in time), and false. A redirect to a URL the file disallows fails
// the page, saying so.
//
// While the file cannot be had because the site answers it with 5xx or
// 429, or another process is fetching it, the page waits without a retry
// charged, up to Options.MaxRobotsWait. When the site does not answer at
// all (refused, reset, timed out, unknown host) the page itself would
// most likely fail the same way: the wait counts as a failed try, with the
// usual backoff, so a crawl of a site that is down ends in seconds.
func (d *Downloader) allowed(ctx context.Context, r *Request, u *url.URL) (politeness.Rule, Result, bool) {
	var since time.Time // since when the file cannot be had
	for {
		dec, err := d.askRobots(ctx, r.Job, r.at)
		var wait time.Duration
		switch {
		case ctx.Err() != nil:
			return politeness.Rule{}, cancelled(ctx.Err()), false
		case errors.Is(err, robots.ErrRefused):
			// The job may not reach the address: no wait or retry helps.
			d.deps.Metrics.Failed("transport")
			return politeness.Rule{}, Result{Kind: Failed, Err: fmt.Errorf("fetch %s: %w", r.URL, err)}, false
		case err != nil:
			d.log.Warn("robots.txt check failed; the page waits", zap.String("url", r.URL), zap.Error(err))
			wait = time.Second
		case dec.Temporary && dec.Unreachable:
			r.tries++
			if r.tries > r.Job.Spec.MaxRetries {
				d.deps.Metrics.Failed("robots")
				return politeness.Rule{}, Result{Kind: Failed, Transient: true, Err: fmt.Errorf(
					"fetch %s: the site did not answer for robots.txt (%s) in %d tries", r.URL, robots.Origin(u), r.tries)}, false
			}
			d.deps.Metrics.Retried(1)
			wait = d.opts.Backoff(r.tries, nil)
		case dec.Temporary:
			if since.IsZero() {
				since = time.Now()
			}
			left := d.opts.MaxRobotsWait - time.Since(since)
			if left <= 0 {
				d.deps.Metrics.Failed("robots")
				return politeness.Rule{}, Result{Kind: Failed, Transient: true, Err: fmt.Errorf(
					"fetch %s: robots.txt of %s has been unavailable for %s (the site answers 5xx or 429, or cannot be reached)",
					r.URL, robots.Origin(u), d.opts.MaxRobotsWait)}, false
			}
			wait = min(max(dec.RetryAfter, 100*time.Millisecond), left)
			d.deps.Metrics.Politeness().Waited(r.host, wait, "robots")
		case !dec.Allowed && len(r.chain) > 0:
			d.deps.Metrics.Robots().Disallowed(r.host)
			d.deps.Metrics.Failed("redirect")
			return politeness.Rule{}, Result{Kind: Failed, Err: fmt.Errorf(
				"fetch %s: redirected to %s, which robots.txt disallows", r.URL, r.at)}, false
		case !dec.Allowed:
			d.deps.Metrics.Robots().Disallowed(r.host)
			return politeness.Rule{}, Result{Kind: Disallowed, Err: fmt.Errorf("fetch %s: disallowed by robots.txt", r.URL)}, false
		default:
			return r.Job.rule(dec), Result{}, true
		}
		if err := d.sleep(ctx, wait); err != nil {
			return politeness.Rule{}, cancelled(err), false
		}
	}
}

// askRobots asks the job's robots.txt about rawURL.
func (d *Downloader) askRobots(ctx context.Context, j *Job, rawURL string) (robots.Decision, error) {
	if j.robots == nil {
		return robots.Decision{Allowed: true}, nil
	}
	return j.robots.Check(ctx, rawURL, j.Spec.UserAgent)
}
