// Package canon gives every request of the crawl its identity: the
// canonical form of its URL (URL, Ref; w3lib's canonicalize_url) and its
// fingerprint, the SHA1 over method, canonical URL and body that Scrapy
// computes (Fingerprint, URLFingerprint).
//
// The master fingerprints the seeds and every detail link before the
// dupefilter (package dedup) sees them; the slave and the client read the
// fingerprints back from tasks and items. The package does no I/O and
// depends on nothing else of the crawler's, so every role can use it
// without pulling in the dupefilter or Redis.
package canon
