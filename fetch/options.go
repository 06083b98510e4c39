package fetch

import (
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// DefaultUserAgent names the crawler; it is sent when neither
// Request.UserAgent nor Options.UserAgent is set.
const DefaultUserAgent = "crawler/1.0 (+https://github.com/crawler-dev/crawler)"

// Options configures a Fetcher. Zero values take the defaults of
// DefaultOptions; negative values are invalid.
type Options struct {
	// Timeout bounds one request, body included, unless Request.Timeout
	// says otherwise. Default 30s.
	Timeout time.Duration
	// MaxBodyBytes bounds a page's size, as sent and once decompressed,
	// unless Request.MaxBodyBytes says otherwise. Default 10 MiB.
	MaxBodyBytes int64
	// MaxRedirects bounds the redirects followed. Default 5.
	MaxRedirects int
	// UserAgent is sent when Request.UserAgent is empty. Default
	// DefaultUserAgent.
	UserAgent string
	// MaxProxyTransports bounds how many proxies keep a connection pool at
	// once; the least recently used pool beyond it has its idle
	// connections closed. Default 64.
	MaxProxyTransports int
	// MemoryBudget bounds the memory the pages this Fetcher returned take
	// until they are released (Page.Release): each counts about PageCost
	// times its size, its body and what parsing it makes. A fetch waits
	// for room before it reads a body. 0 means no bound.
	MemoryBudget int64
}

// DefaultOptions returns the defaults that zero fields take.
func DefaultOptions() Options {
	return Options{
		Timeout:            30 * time.Second,
		MaxBodyBytes:       10 << 20,
		MaxRedirects:       5,
		UserAgent:          DefaultUserAgent,
		MaxProxyTransports: 64,
	}
}

// Validate rejects negative values, naming the field.
func (o Options) Validate() error {
	for _, f := range []struct {
		name  string
		value int64
	}{
		{"Timeout", int64(o.Timeout)}, {"MaxBodyBytes", o.MaxBodyBytes}, {"MaxRedirects", int64(o.MaxRedirects)},
		{"MaxProxyTransports", int64(o.MaxProxyTransports)},
		{"MemoryBudget", o.MemoryBudget},
	} {
		if f.value < 0 {
			return cluster.Invalid(f.name, f.value, "is negative")
		}
	}
	return nil
}

// withDefaults fills the fields that are zero (or, for callers that skipped
// Validate, negative) from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = d.MaxBodyBytes
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = d.MaxRedirects
	}
	if o.UserAgent == "" {
		o.UserAgent = d.UserAgent
	}
	if o.MaxProxyTransports <= 0 {
		o.MaxProxyTransports = d.MaxProxyTransports
	}
	return o
}
