package downloader

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/politeness"
)

// ErrRedirectLoop is the reason of a page whose redirects lead back to a
// URL of their own chain.
var ErrRedirectLoop = errors.New("redirect loop")

// hop follows a redirect (step 6 of fetchPage) as a request of its own,
// the way Scrapy turns each hop into a new request: its target goes back
// to step 3, so it is asked of its own host's robots.txt, waits for its
// own host's turn (a slot and a booked time), and passes the address
// guard when it connects. It returns the target to fetch next; or the
// page's Result when the chain ends here: it left the job's allowed
// domains (Offsite), led back into itself (a loop) or took more than the
// fetcher's MaxRedirects hops. A hop is not a try: it does not count
// toward the page's retries.
func (d *Downloader) hop(r *Request, a attempt) (*url.URL, Result, bool) {
	target, status := a.page.Redirect, a.page.Status
	a.page.Release()
	r.tries--
	failed := func(err error) (*url.URL, Result, bool) {
		d.deps.Metrics.Failed("redirect")
		return nil, Result{Kind: Failed, Status: status, Latency: a.latency, Err: err}, false
	}
	chain := append(slices.Clone(r.chain), r.at)
	switch {
	case slices.Contains(chain, target):
		return failed(fmt.Errorf("fetch %s: %w: %s", r.URL, ErrRedirectLoop, strings.Join(append(chain, target), " -> ")))
	case len(chain) > d.deps.Fetcher.MaxRedirects():
		return failed(fmt.Errorf("fetch %s: %w (%d): %s", r.URL, fetch.ErrTooManyRedirects, len(chain),
			strings.Join(append(chain, target), " -> ")))
	}
	u, err := httpURL(target)
	if err != nil {
		return failed(fmt.Errorf("fetch %s: redirected to %q: %w", r.URL, target, err))
	}
	if !r.Job.Spec.AllowsHost(strings.ToLower(u.Hostname())) {
		err := &fetch.OffsiteRedirectError{URL: target}
		return nil, Result{Kind: Offsite, Status: status, Latency: a.latency, Err: fmt.Errorf("fetch %s: %w", r.URL, err)}, false
	}
	r.chain, r.at = chain, target
	r.host, r.target = politeness.HostOf(u), targetOf(u)
	return u, Result{}, true
}

// httpURL parses an absolute http(s) URL.
func httpURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, errors.New("not an absolute http(s) URL")
	}
	return u, nil
}
