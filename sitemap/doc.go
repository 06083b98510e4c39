// Package sitemap reads sitemaps (the sitemaps.org protocol) for a job's
// sitemaps entries: <urlset> and <sitemapindex> files, gzipped or not,
// text sitemaps, and the Sitemap: lines of robots.txt. A file counts at
// most MaxURLs entries and MaxBytes once unzipped, and its elements nest
// at most MaxNesting deep, so a sitemap cannot take a process's memory;
// a parse reads its context, so a stopping process does not finish one.
//
// The package does no I/O of its own: a Walker fetches through the Fetch
// function its caller gives, so the master walks sitemaps through its
// downloader, obeying robots.txt, allowed_domains and the host's budget
// like any page, and hands each page URL to its frontier as the entry's
// kind.
package sitemap
