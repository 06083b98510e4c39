// Package politeness keeps the crawler's promise to each site, once for
// the whole cluster: the master fetching list pages and every slave
// fetching detail pages draw on one budget per target host, kept in Redis.
//
// A host's budget has a rate (GCRA on Redis's clock, so the hosts' clocks
// do not matter), a concurrency cap (leases in a sorted set scored by
// deadline, so a process that dies frees its leases when they expire; a
// long request renews its lease), a pause (Retry-After) and a backoff
// factor that 429s and 503s cut and successes raise (AIMD). One Lua script
// checks and takes all of them in one atomic step: the GCRA is written into
// it rather than taken from github.com/go-redis/redis_rate, because a
// request must take its rate slot and its concurrency slot together (or
// neither), and the backoff factor must scale the rate in the same step.
//
// Nothing here blocks: Acquire and AcquireMany answer at once with leases,
// or with how long to wait, so a worker is never held while a host is busy.
// AcquireMany asks for many hosts in one round trip (a pipeline of one
// script call per host; each host's keys share a hash tag, so this works on
// Redis Cluster too). Queue is the per-process loop built on it: workers
// take (Next) whatever task's host is ready, tasks of busy hosts wait in
// the queue, and one round trip per round serves every idle worker; Parked
// says how many of them will not start soon. Keeper renews the leases of a
// process's long requests, all in one round trip per tick. Budgets are per
// target host (HostOf), never per proxy: a site sees the same rate
// whichever proxies the requests take.
package politeness
