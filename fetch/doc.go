// Package fetch downloads pages for the master (list pages) and the slaves
// (detail pages). It is the one place that talks HTTP to crawled sites: it
// decodes any charset to UTF-8, limits body size and redirects, refuses
// loopback and private addresses at connect time unless a job allows them
// (so DNS rebinding cannot bypass the check), and tells transient failures
// (timeouts, resets, 429, 5xx), which are worth retrying, from permanent ones.
package fetch
