package downloader

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/internal/ctxtime"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/politeness"
	"github.com/crawler-dev/crawler/proxy"
	"github.com/crawler-dev/crawler/robots"
)

// robotsMaxBytes bounds a robots.txt download: RFC 9309 reads the first
// 500 KiB, and a longer file is cut there, not refused.
const robotsMaxBytes = 4 << 20

// Job is what the Downloader keeps of a job: its request settings, its
// cookie jar and the robots.txt cache its requests ask.
type Job struct {
	// Name is the job's name.
	Name string
	// Spec is the job's spec.
	Spec    *jobspec.Job
	jar     http.CookieJar
	robots  *robots.Cache
	banText [][]byte // Spec.BanText in lower case
}

// NewJob prepares a job's requests. Make one per job and process and keep
// it: it holds the job's cookies and parsed robots.txt files.
func (d *Downloader) NewJob(spec *jobspec.Job) (*Job, error) {
	j := &Job{Name: spec.Name, Spec: spec, banText: banTexts(spec.BanText)}
	if spec.Cookies {
		j.jar = fetch.NewJar()
	}
	if spec.ObeyRobots {
		opts := d.robotsOpts
		opts.Keys = d.deps.Keys
		cache, err := robots.New(d.deps.Redis, d.robotsGetter(j), opts, d.log)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", spec.Name, err)
		}
		j.robots = cache
	}
	return j, nil
}

// request is the fetch of one attempt at r: one hop, its redirect handed
// back (hopstep.go); the page's validators go with its own URL only.
func (j *Job) request(r *Request, via *url.URL) fetch.Request {
	s := j.Spec
	req := fetch.Request{URL: r.at, AllowPrivate: s.AllowPrivateNetworks, UserAgent: s.UserAgent,
		Headers: s.Headers, Jar: j.jar, MaxBodyBytes: s.MaxBodyBytes, Timeout: s.Timeout.Std(),
		Proxy: via, AllowNonHTML: r.AllowNonHTML, OneHop: true, TruncateBody: r.TruncateBody, KeepExchange: r.KeepExchange}
	if r.MaxBodyBytes > 0 {
		req.MaxBodyBytes = r.MaxBodyBytes
	}
	if len(r.chain) == 0 {
		req.Validators = r.Validators
	}
	return req
}

// burstWindow is how much of a host's rate may go at once: a tenth of a
// second's worth. Without it a fast rate would be granted one request per
// round trip to Redis, and a host allowed 1,000 requests a second would get
// a few hundred.
const burstWindow = 100 * time.Millisecond

// rule is the job's politeness rule for a host, with its Crawl-delay.
func (j *Job) rule(d robots.Decision) politeness.Rule {
	burst := int(j.Spec.PerHostRPS * burstWindow.Seconds())
	return politeness.Rule{RPS: j.Spec.PerHostRPS, Burst: max(burst, 1), Concurrency: j.Spec.PerHostConcurrency,
		CrawlDelay: d.CrawlDelay}
}

// robotsGetter fetches a robots.txt the way the job fetches pages: its
// address guard, user agent, proxy mode (a job that requires proxies
// never reaches a site directly, not even for robots.txt) and its host's
// budget (the file is a request the site counts like any other).
func (d *Downloader) robotsGetter(j *Job) robots.Getter {
	return func(ctx context.Context, raw string) (robots.Response, error) {
		u, err := url.Parse(raw)
		if err != nil {
			return robots.Response{}, err
		}
		picked, err := d.pickWaiting(ctx, j, u)
		if err != nil {
			return robots.Response{}, err
		}
		req := fetch.Request{URL: raw, AllowPrivate: j.Spec.AllowPrivateNetworks, UserAgent: j.Spec.UserAgent,
			Headers: j.Spec.Headers, AllowNonHTML: true, MaxBodyBytes: robotsMaxBytes, Timeout: j.Spec.Timeout.Std()}
		if picked != nil {
			req.Proxy = picked.URL()
		}
		pass, err := d.gates.Enter(ctx, politeness.HostOf(u), j.rule(robots.Decision{}))
		if err != nil {
			d.dropPick(picked)
			return robots.Response{}, err
		}
		page, err := d.getRobots(ctx, req)
		pass.Done(answer(page, err))
		d.reportProxy(picked, page, err, 0)
		if ctx.Err() == nil {
			status, _ := answer(page, err)
			d.deps.Metrics.Robots().Fetched(status, err)
		}
		page.Release() // the body is small and parsed at once
		var fe *fetch.Error
		switch {
		case err == nil:
			return robots.Response{Status: page.Status, Body: page.Body}, nil
		case errors.As(err, &fe) && fe.Status != 0 && !fe.ProxyFault:
			return robots.Response{Status: fe.Status}, nil
		case errors.Is(err, fetch.ErrTooManyRedirects):
			// Redirects past those followed: robots.txt is unavailable
			// (RFC 9309 §2.3.1.2), which the Cache reads as allow all.
			return robots.Response{Status: http.StatusFound}, nil
		case errors.Is(err, fetch.ErrBlockedAddress):
			return robots.Response{}, fmt.Errorf("%w: %w", robots.ErrRefused, fetch.AddressRefusal(err))
		}
		return robots.Response{}, err
	}
}

// getRobots downloads a robots.txt under the gate, which bounds the
// downloads running at once. Only the download holds it: not the wait for
// a proxy before it, nor the pages that wait for another page's check of
// the same origin, so an origin whose robots.txt is slow to come holds
// back no other.
func (d *Downloader) getRobots(ctx context.Context, req fetch.Request) (*fetch.Page, error) {
	select {
	case d.gate <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-d.gate }()
	return d.deps.Fetcher.Do(ctx, req)
}

// pickProxy picks a proxy for a request of job j to u, or nil to go
// direct. A job in auto mode goes direct when no proxy is usable for the
// request (the pool is empty, or every proxy is banned for the host,
// cooling down, at its cap or, for https, unable to tunnel); errNoProxy
// means the job requires a proxy and none is free now.
func (d *Downloader) pickProxy(ctx context.Context, j *Job, u *url.URL, exclude []proxy.ID) (*proxy.Picked, error) {
	if j.Spec.Proxy == jobspec.ProxyOff || (j.Spec.Proxy == jobspec.ProxyAuto && d.counts.none(ctx, d.pool)) {
		return nil, nil // no pick at all: a script call per request saved while the pool is empty
	}
	p, err := d.pool.Pick(ctx, u, exclude)
	if len(exclude) > 0 && noneFree(err) {
		// Another proxy is better for a retry, but the same one beats waiting
		// or going direct when it is the only one free.
		p, err = d.pool.Pick(ctx, u, nil)
	}
	switch {
	case err == nil:
		return &p, nil
	case noneFree(err) && j.Spec.Proxy == jobspec.ProxyAuto:
		return nil, nil // auto: direct when no proxy is usable for this request
	case errors.Is(err, proxy.ErrBusy):
		return nil, errProxyBusy // require: wait a moment for a slot
	case noneFree(err):
		return nil, errNoProxy // require: wait for one
	}
	return nil, fmt.Errorf("pick proxy: %w", err)
}

// noneFree reports a pick that found no proxy for the request.
func noneFree(err error) bool {
	return errors.Is(err, proxy.ErrEmpty) || errors.Is(err, proxy.ErrUnavailable) || errors.Is(err, proxy.ErrBusy)
}

// pickWaiting is pickProxy for a robots.txt fetch: one per origin, so it
// waits for a proxy itself, asking the pool after Options.ProxyWait and
// twice as long each time, until ctx ends (the fetch's timeout; the file
// then counts as unreachable for a while, and the pages wait for it).
func (d *Downloader) pickWaiting(ctx context.Context, j *Job, u *url.URL) (*proxy.Picked, error) {
	wait := d.opts.ProxyWait
	for {
		picked, err := d.pickProxy(ctx, j, u, nil)
		if !errors.Is(err, errNoProxy) {
			return picked, err
		}
		if err := ctxtime.Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("wait for a proxy: %w", err)
		}
		wait = min(2*wait, d.opts.MaxProxyWait)
	}
}

// errNoProxy means a request must wait for a proxy.
var errNoProxy = errors.New("no proxy free for this request")

// errProxyBusy means a request must wait for a proxy that is at its cap: a
// slot frees soon (Options.ProxyBusyWait).
var errProxyBusy = fmt.Errorf("%w: every proxy for it is at its cap", errNoProxy)

// Allowed reports whether the job's robots.txt lets it fetch rawURL. While
// the file cannot be had yet (the site answers 5xx, another process is
// fetching it) it says yes: the request itself will wait for the answer.
// The master uses it to leave out detail links robots.txt disallows before
// they are routed.
func (j *Job) Allowed(ctx context.Context, rawURL string) (bool, error) {
	if j.robots == nil {
		return true, nil
	}
	dec, err := j.robots.Check(ctx, rawURL, j.Spec.UserAgent)
	if err != nil {
		return false, fmt.Errorf("robots.txt of %s: %w", rawURL, err)
	}
	return dec.Allowed || dec.Temporary, nil
}
