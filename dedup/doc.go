// Package dedup is the crawler's shared dupefilter. The master asks it, in
// one atomic Redis script per list page, which detail links are new, and in
// the same script the job's ledger (package ledger, whose admission the
// script ends with) enqueues the new ones on their slave queues and counts
// them (Filter.Admit), so a crash never leaves a link recorded as seen but
// not queued.
//
// A Filter has three modes behind the same methods: an expiring multi-Bloom
// filter (one Redis string per time granule, the default), an exact sorted
// set of fingerprint to expiry time, and scrapy-redis's plain SET of hex
// fingerprints (the baseline, no expiry). It takes request fingerprints
// computed by package canon.
//
// A bloom Filter may keep copies of its slices in process memory
// (Options.CacheBytes, refreshed by Prepare): sealed slices, which no
// script writes any more, are checked in Go alone, and the current slice,
// which the filter claims as its writer, is checked in Go and written
// without Redis reading it. Only what the copies do not answer goes to
// Redis, in the same one script per call, which verifies the clock, the
// seals and the claim before writing; the answers are those of a check of
// every slice in Redis.
//
// Options.Validate bounds every size (MaxCapacity, MaxSlices,
// MaxSliceKeys), and EstimateBytes says how much Redis memory a filter
// takes at most, so a job can be refused before it fills Redis
// (RedisMemory.CheckRoom).
//
// Every key lives under the namespace the caller gives, which carries the
// job's Redis Cluster hash tag, so one script touches one slot.
package dedup
