// Package politeness keeps the crawler's promise to each site, once for
// the whole cluster: the master fetching list pages and every slave
// fetching detail pages draw on one budget per target host, kept in Redis,
// and a request costs Redis nothing.
//
// A host's budget has a rate (GCRA on Redis's clock, so the hosts' clocks
// do not matter), a concurrency cap (slots shared by water-filling among
// the processes that want some), a pause (Retry-After) and a backoff
// factor that 429s and 503s cut and successes raise (AIMD). The GCRA is
// written into the scripts rather than taken from
// github.com/go-redis/redis_rate because the backoff factor must scale
// the rate in the same step, and because a process books times ahead
// rather than asking at each request.
//
// Each process (Gates) books times on a host's GCRA to send its requests
// at, maps them to its own clock (serverClock: the offset of the quickest
// recent round trip, as NTP does), and lets each request go at a booked
// time on a slot it holds, with no round trip: the site sees the rate
// whichever process sends, redirect hops and retries included. What a
// process needs from its hosts it settles in rounds (lua/round.lua): one
// round trip settles every host that needs something within
// Options.Batch (bookings running out, slots to take or give back,
// throttled answers to tell), and a process's hold on all its slots is
// renewed by one entry per process, not one per host, so a host that
// waits for its next time costs nothing. The hosts' budgets are kept in
// shards (one on a single Redis server, ClusterShards on a Redis
// Cluster), each a hash of packed host states (lua/packed.lua) and a hash
// of live processes; a host at rest has no entry, and entries nobody
// used for Options.StateTTL are swept.
//
// Nothing here blocks a worker: Enter waits on a channel, and Parked says
// how many of the waiting requests will not start soon. Budgets are per
// target host (HostOf), never per proxy: a site sees the same rate
// whichever proxies the requests take.
package politeness
