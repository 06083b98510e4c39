// Package fetch downloads pages for the master (list pages) and the slaves
// (detail pages). It is the one place that talks HTTP to crawled sites.
//
// Fetcher.Do makes exactly one attempt and says, in an *Error, whether
// another may help (Transient), whether a proxy rather than the site failed
// (ProxyFault) and how long a 429 or 503 asked to wait (RetryAfter), so
// that a scheduler can plan the next try without holding a worker.
// Retrying is the caller's: the downloader's one policy
// (downloader.Options.Backoff) for a crawl and for crawler check alike.
//
// Each Request carries the job's settings: user agent, headers, cookie jar,
// size and time limits, the hosts redirects may lead to, and the proxy to
// go through (one connection pool per proxy identity). Bodies come
// decompressed (gzip, deflate, br) within the size limit, and HTML is
// decoded from any charset to UTF-8; a body that is not HTML is refused
// with ErrNotHTML unless asked for.
//
// The address guard refuses loopback and private addresses unless the job
// allows them, and link-local and cloud-metadata addresses always: at
// connect time for direct requests (so DNS rebinding cannot bypass it), by
// resolving the target before the request for proxied ones.
package fetch
