// Package bench holds the measurements behind `crawler-bench ...`: each
// compares one of the crawler's components with the alternatives on the
// same input, or measures what the cluster costs, and returns results that
// print as tables, aligned text or Markdown (Table, Format).
//
//   - Dedup: the dupefilter's modes against the scrapy-redis methods.
//   - Assign: the two-level hash against the paper's, jump hash and rings.
//   - Crawl: real master and slave processes (the built binary) crawl a
//     demo site on loopback hosts, with latency; pages/s beside the cost
//     per page: CPU of the processes (/proc) and of Redis (INFO), Redis
//     commands (commandstats), and the commands and round trips each
//     process sent, counted on the wire by a Tap in front of Redis.
//   - Site: one site walked from its first list page, with faults, crawled
//     by a cluster, by `crawler run` and by colly v2 (peers/colly, a module
//     of its own, built at run time), interleaved; pages/s beside the
//     bound any crawler with the same slots can reach.
//   - ProxyPool: a proxy pick and its report in Redis, and validation.
//   - Idle: what a cluster with no job costs Redis per second and node.
//   - Memory: a slave's peak resident set on big pages at high concurrency.
//   - Report: all of them, as the Markdown of docs/benchmarks.md.
//
// Each can run on a redis-server of its own (StartRedis), so that Redis's
// statistics hold the benchmark's traffic alone.
package bench
