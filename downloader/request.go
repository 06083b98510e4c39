package downloader

import (
	"context"
	"time"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/proxy"
)

// Kind says what became of a Request.
type Kind int

// What becomes of a request.
const (
	// Fetched: Result.Page holds the page.
	Fetched Kind = iota
	// Failed: the page could not be fetched; Result.Err says why.
	Failed
	// NotHTML: the page is not HTML (a PDF, an image); there is nothing
	// to extract. Result.Err carries the content type.
	NotHTML
	// Disallowed: the site's robots.txt disallows the URL for this job's
	// user agent. No request was made.
	Disallowed
	// Offsite: a redirect led off the job's allowed domains; it was not
	// followed. Result.Err names the target.
	Offsite
	// Cancelled: the caller's context or Abandon, or the Downloader, ended
	// before the request was sent.
	// Nothing is known about the page; hand the work back.
	Cancelled
)

// String names the kind, as failure records and logs say it.
func (k Kind) String() string {
	return [...]string{"fetched", "failed", "not_html", "robots", "offsite", "cancelled"}[k]
}

// Skipped reports whether the kind is a page left out on purpose: counted
// apart from failures, never retried.
func (k Kind) Skipped() bool { return k == NotHTML || k == Disallowed || k == Offsite }

// Request is one page to download (Downloader.Fetch).
type Request struct {
	// Abandon, when not nil, ends the request's waits when it ends (client
	// cancel stopped the job): a request not yet sent is Cancelled, while
	// one on the wire runs to its end, as the site is serving it already.
	Abandon context.Context
	// URL is the page's absolute URL.
	URL string
	// Job is the job the page belongs to.
	Job *Job
	// Validators are the page's stored ETag and Last-Modified, sent as a
	// conditional request; a 304 is Fetched with Page.NotModified.
	Validators fetch.Validators
	// Started, when set, is called once, on the worker, just before the
	// page's first request is sent (a slave marks its task begun).
	Started func()
	// Kind is the page's kind; a kind that renders (jobspec.Job.RenderOf)
	// is loaded in the Downloader's Renderer once fetched.
	Kind string
	// AllowNonHTML fetches a page that is not HTML (a JSON page, a
	// sitemap) as it is, instead of skipping it as NotHTML.
	AllowNonHTML bool
	// MaxBodyBytes, when not 0, bounds the page's body in place of the
	// job's max_body_bytes; TruncateBody cuts a longer body there
	// (Page.Truncated) instead of failing the page (fetch.Request).
	MaxBodyBytes int64
	TruncateBody bool
	// KeepExchange keeps the request and answer as they went over the
	// wire with the page (fetch.Request.KeepExchange), for an archive.
	KeepExchange bool

	ctx      context.Context // the caller's (Fetch): it ends the request wherever it is
	started  bool            // Started was called
	tries    int             // attempts made (requests sent)
	proxied  int             // attempts the proxy failed, not charged to the page
	excluded []proxy.ID      // proxies this page went through already
	target   proxyTarget     // what a pick for it depends on
	host     string          // the politeness host of at
	at       string          // the URL fetched now: URL, or a redirect's target
	chain    []string        // the URLs redirected from so far, URL first
}

// Result is what became of a Request.
type Result struct {
	// Kind is what became of it.
	Kind Kind
	// Page is the page, when Kind is Fetched. Release it once done with,
	// so that its memory no longer counts against the fetcher's budget.
	Page *fetch.Page
	// Err says why when Kind is Failed, NotHTML or Offsite.
	Err error
	// Tries is how many requests were sent for it.
	Tries int
	// Status is the last HTTP status the site sent, or 0.
	Status int
	// Transient is true when a Failed page might be fetched later (the
	// retries ran out on a timeout or a 5xx).
	Transient bool
	// Latency is the last attempt's duration.
	Latency time.Duration
	// Rendered is true when Page's body is the DOM its rendering in the
	// headless browser left (its kind says render).
	Rendered bool
}

// cancelled reports whether the caller gave the request up.
func (r *Request) cancelled() bool { return r.ctx != nil && r.ctx.Err() != nil }
