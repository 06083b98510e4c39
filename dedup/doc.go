// Package dedup is the crawler's shared dupefilter. The master asks it, in
// one atomic Redis script per list page, which detail links are new, and in
// the same script enqueues the new ones on their slave queues and counts them
// (Filter.Admit), so a crash never leaves a link recorded as seen but not
// queued.
//
// A Filter has three modes behind the same methods: an expiring multi-Bloom
// filter (one Redis string per time granule, the default), an exact sorted
// set of fingerprint to expiry time, and scrapy-redis's plain SET of hex
// fingerprints (the baseline, no expiry). URLs are canonicalized the way
// w3lib does before they are fingerprinted (Canonicalize, URLFingerprint).
//
// Near-duplicate content (the same article under another URL) is found with
// a 64-bit simhash over character bigrams (Simhash) and a banded Redis index
// (NearIndex).
//
// Every key lives under the namespace the caller gives, which carries the
// job's Redis Cluster hash tag, so one script touches one slot.
package dedup
