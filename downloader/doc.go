// Package downloader sends a crawler process's requests the way a site
// should be crawled, whoever sends them: the master (list pages) and every
// slave (detail pages) put each page they need into a Downloader, which
//
//  1. asks the job's robots.txt (package robots, one fetch per origin for
//     the whole cluster) and leaves out what it disallows, taking its
//     Crawl-delay; while the file cannot be had (the site answers 5xx or
//     429, or another process is fetching it) the page waits for it, out
//     of any worker and without a retry charged, up to
//     Options.MaxRobotsWait;
//  2. waits at its host's gate (package politeness) for a slot of the
//     host's cluster-wide cap and a time this process booked on the
//     host's rate: each process holds a fair share of each host's slots
//     and books times in rounds for all its hosts, so a request costs
//     Redis nothing, and a waiting request costs a parked goroutine, not
//     a worker and not a poll; one slow host never starves the others;
//  3. picks a proxy from the shared pool when the job uses one (package
//     proxy), and never the same one for a retry. A job in auto mode goes
//     direct when no proxy is usable for the request; one that requires
//     proxies waits for one, all the pages of a target together, with one
//     pick per wait and no place taken in the host's budget meanwhile;
//  4. makes ONE request (fetch.Fetcher.Do, fetch.Request.OneHop) on one
//     of the process's workers: a redirect comes back to step 1 as a
//     request of its own for its target (its host's robots.txt, gate and
//     address guard; a loop, more than the fetcher's MaxRedirects hops,
//     or a target robots.txt disallows fails the page, saying so), and
//     the Transport never sends it again behind the gate's back. The
//     answer goes back to the host's gate (429s with Retry-After pause
//     the host for the cluster; a host that throttles a real share of its
//     answers is slowed) and to the proxy's score; on a transient failure
//     the page waits its backoff (the longer of our exponential backoff
//     and the site's Retry-After) and its host's turn again. A 403, a 429
//     or a ban page (the job's ban_text) through a proxy bans the proxy
//     for the host and the page goes at once through another, as a retry.
//
// Fetch takes a request through these steps, which read top to bottom in
// fetchPage, on the caller's goroutine, and returns a Result saying what
// became of it: fetched, failed (with the reason),
// skipped (not HTML, disallowed by robots.txt, redirected off the allowed
// domains) or cancelled (the process or the caller stopped; nothing is
// recorded and the caller hands the work back). Parked says how many of
// the requests waiting are not expected to start soon, so a caller that
// bounds what it holds can count them apart.
//
// This is Scrapy's downloader with its robots, retry, proxy and autothrottle
// middlewares, except that the throttling is one budget for the whole
// cluster rather than one per process.
package downloader
