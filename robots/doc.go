// Package robots makes the crawler obey robots.txt (RFC 9309) as one
// cluster: the master, which fetches list pages, and every slave, which
// fetches detail pages, ask the same Cache before each request.
//
// Each origin's robots.txt (scheme, host and port) is fetched by one process
// of the cluster per TTL: the first process to need it takes a short lease
// in Redis, fetches the file through the caller's Getter (so the crawler's
// address guard and proxies apply), and stores the status, the first
// 500 KiB of the body and the fetch time in Redis with an expiry; the other
// processes wait for it briefly, or read it. Each process keeps the parsed
// files in a bounded cache of its own until Redis's copy expires.
//
// What the status means (RFC 9309 §2.3.1): 2xx, the file's rules; 4xx (429
// excepted), no rules, everything allowed; 5xx, 429 or an unreachable
// server, everything disallowed for Options.ErrorTTL (1 minute by default),
// after which the file is fetched again; up to Options.MaxRedirects (5)
// redirects are followed, past them the file counts as unavailable.
//
// Rules are read as RFC 9309 says and as Google's reference parser reads
// them: the user agent's product token picks the groups, the longest
// matching pattern wins and an Allow wins a tie. Lines are tokenised by
// github.com/jimsmart/grobotstxt (a port of Google's parser); patterns are
// matched as its Matches does but in time linear in the pattern and the
// path (match.go), since Google's matcher is quadratic and a hostile file
// of long wildcard patterns held a core for seconds a URL; a check past
// MaxMatchWork answers disallowed. github.com/temoto/robotstxt, which
// colly uses, is not used
// because it lets the first of two equally long rules win, drops the whole
// file over one bad Crawl-delay or a rule before the first User-agent line,
// and matches "User-agent: crawl" for a crawler named "crawler".
// Crawl-delay, not part of the RFC, is read too, for package politeness.
package robots
