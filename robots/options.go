package robots

import (
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// Options configures a Cache. Start from DefaultOptions.
type Options struct {
	// Keys names the Redis keys the cluster shares.
	Keys cluster.Keys
	// TTL is how long a fetched robots.txt (or a 4xx answer) is used before
	// it is fetched again. RFC 9309 §2.4 asks for at most 24 hours.
	TTL time.Duration
	// ErrorTTL is how long a 5xx, a 429 or an unreachable server means
	// "disallow everything" before the file is fetched again (RFC 9309
	// §2.3.1.3-4 leave "a while" to the crawler). The default, 1 minute,
	// costs the site one request a minute from the whole cluster and
	// resumes the crawl soon after a short outage.
	ErrorTTL time.Duration
	// FetchTimeout bounds one fetch of a robots.txt, redirects included; it
	// is also the lease the fetching process holds, after which another
	// process may try.
	FetchTimeout time.Duration
	// Wait is how long Check waits for another process that is fetching
	// the same robots.txt before it answers "not yet" (Decision.Temporary).
	Wait time.Duration
	// MaxEntries bounds the parsed files kept in this process (least
	// recently used go first).
	MaxEntries int
	// MaxCrawlDelay caps the Crawl-delay a site may ask for; a larger one
	// is reported as MaxCrawlDelay.
	MaxCrawlDelay time.Duration
	// MaxRedirects is how many redirects a fetch follows (RFC 9309
	// §2.3.1.2 asks for at least five); past them the file counts as
	// unavailable, which allows everything.
	MaxRedirects int
}

// DefaultOptions returns the defaults: TTL 24h, ErrorTTL 1m, FetchTimeout
// 30s, Wait 5s, MaxEntries 10000, MaxCrawlDelay 60s, MaxRedirects 5.
func DefaultOptions() Options {
	return Options{
		TTL:           24 * time.Hour,
		ErrorTTL:      time.Minute,
		FetchTimeout:  30 * time.Second,
		Wait:          5 * time.Second,
		MaxEntries:    10000,
		MaxCrawlDelay: time.Minute,
		MaxRedirects:  5,
	}
}

// Validate reports the first option out of range as a *cluster.FieldError.
func (o Options) Validate() error {
	switch {
	case o.TTL < time.Second || o.TTL > 30*24*time.Hour:
		return cluster.Invalid("TTL", o.TTL, "is outside 1s..720h")
	case o.ErrorTTL < 10*time.Millisecond || o.ErrorTTL > o.TTL:
		return cluster.Invalid("ErrorTTL", o.ErrorTTL, "is outside 10ms..TTL (%s)", o.TTL)
	case o.FetchTimeout < 10*time.Millisecond || o.FetchTimeout > 10*time.Minute:
		return cluster.Invalid("FetchTimeout", o.FetchTimeout, "is outside 10ms..10m")
	case o.Wait < 0 || o.Wait > 10*time.Minute:
		return cluster.Invalid("Wait", o.Wait, "is outside 0..10m")
	case o.MaxEntries < 1 || o.MaxEntries > 10_000_000:
		return cluster.Invalid("MaxEntries", o.MaxEntries, "is outside 1..10000000")
	case o.MaxCrawlDelay < 0 || o.MaxCrawlDelay > 24*time.Hour:
		return cluster.Invalid("MaxCrawlDelay", o.MaxCrawlDelay, "is outside 0..24h")
	case o.MaxRedirects < 0 || o.MaxRedirects > 20:
		return cluster.Invalid("MaxRedirects", o.MaxRedirects, "is outside 0..20")
	}
	return nil
}
