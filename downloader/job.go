package downloader

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/fetch"
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
	Spec   *cluster.JobSpec
	jar    http.CookieJar
	robots *robots.Cache
}

// NewJob prepares a job's requests. Make one per job and process and keep
// it: it holds the job's cookies and parsed robots.txt files.
func (d *Downloader) NewJob(spec *cluster.JobSpec) (*Job, error) {
	j := &Job{Name: spec.Name, Spec: spec}
	if spec.Cookies {
		j.jar = fetch.NewJar()
	}
	if spec.ObeyRobots {
		opts := robots.DefaultOptions()
		opts.Keys = d.deps.Keys
		cache, err := robots.New(d.deps.Redis, d.robotsGetter(j), opts, d.log)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", spec.Name, err)
		}
		j.robots = cache
	}
	return j, nil
}

// request is the fetch of one attempt at r.
func (j *Job) request(r *Request, via *url.URL) fetch.Request {
	s := j.Spec
	return fetch.Request{URL: r.URL, AllowPrivate: s.AllowPrivateNetworks, UserAgent: s.UserAgent,
		Headers: s.Headers, Jar: j.jar, MaxBodyBytes: s.MaxBodyBytes, Timeout: s.Timeout.Std(),
		AllowHost: s.AllowsHost, Proxy: via}
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
// address guard, user agent and proxy mode (a job that requires proxies
// never reaches a site directly, not even for robots.txt).
func (d *Downloader) robotsGetter(j *Job) robots.Getter {
	return func(ctx context.Context, raw string) (robots.Response, error) {
		u, err := url.Parse(raw)
		if err != nil {
			return robots.Response{}, err
		}
		picked, err := d.pickProxy(ctx, j, u, nil)
		if err != nil {
			return robots.Response{}, err
		}
		req := fetch.Request{URL: raw, AllowPrivate: j.Spec.AllowPrivateNetworks, UserAgent: j.Spec.UserAgent,
			Headers: j.Spec.Headers, AllowNonHTML: true, MaxBodyBytes: robotsMaxBytes, Timeout: j.Spec.Timeout.Std()}
		if picked != nil {
			req.Proxy = picked.URL()
		}
		page, err := d.deps.Fetcher.Do(ctx, req)
		d.reportProxy(picked, page, err, 0)
		page.Release() // the body is small and parsed at once
		var fe *fetch.Error
		switch {
		case err == nil:
			return robots.Response{Status: page.Status, Body: page.Body}, nil
		case errors.As(err, &fe) && fe.Status != 0 && !fe.ProxyFault:
			return robots.Response{Status: fe.Status}, nil
		}
		return robots.Response{}, err
	}
}

// pickProxy picks a proxy for a request of job j to u, or nil to go
// direct. errNoProxy means the job requires one and none is free now.
func (d *Downloader) pickProxy(ctx context.Context, j *Job, u *url.URL, exclude []proxy.ID) (*proxy.Picked, error) {
	if j.Spec.Proxy == cluster.ProxyOff || (j.Spec.Proxy == cluster.ProxyAuto && d.proxies.none(ctx, d.pool)) {
		return nil, nil // no pick at all: a script call per request saved while the pool is empty
	}
	p, err := d.pool.Pick(ctx, u, exclude)
	if len(exclude) > 0 && (errors.Is(err, proxy.ErrEmpty) || errors.Is(err, proxy.ErrUnavailable)) {
		// Another proxy is better for a retry, but the same one beats waiting
		// for ever when it is the only one free.
		p, err = d.pool.Pick(ctx, u, nil)
	}
	switch {
	case err == nil:
		return &p, nil
	case errors.Is(err, proxy.ErrEmpty) && j.Spec.Proxy == cluster.ProxyAuto:
		return nil, nil // auto: direct while the pool holds no proxy
	case errors.Is(err, proxy.ErrEmpty), errors.Is(err, proxy.ErrUnavailable):
		return nil, errNoProxy // proxies exist but none is free for this host: wait
	}
	return nil, fmt.Errorf("pick proxy: %w", err)
}

// errNoProxy means a request must wait for a proxy.
var errNoProxy = errors.New("no proxy free for this request")

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
