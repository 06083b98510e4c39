// Package proxy is the cluster's validated proxy pool, shared in Redis by
// every master and slave.
//
// A Validator (run by `crawler proxy` on a host of its own, or by the
// master when it has sources) reads proxy lists (ReadSources), admits new
// candidates up to a maximum, and checks each proxy through itself against
// a judge (Judge: an endpoint that echoes the caller's address, headers and
// a random token, which catches tampering and transparent proxies) on a
// schedule of its own. Failing proxies are backed off exponentially with
// jitter and removed after a few failed rounds; when the check URL cannot
// be reached directly, or nearly all the proxies usable lately (usable, or
// evicted by real traffic and not yet removed) fail at once, a circuit
// breaker keeps the pool and says so. One lease in Redis lets one
// validator work at a time across masters: a round renews it as it goes,
// and the script that records results checks it, so a validator that lost
// it writes nothing (ErrLeaseLost).
//
// The default judge listens on loopback, where only proxies on this host
// can reach it. Proxies on other addresses are then not checked at all:
// they wait with a reason naming the flags to set (--proxy-judge-url or
// --proxy-check-url), each such round logs an error, and none is removed
// for it.
//
// A Pool is what fetchers use: Pick chooses a proxy for one request in one
// atomic script (weighted random among the best, minus those cooling down,
// banned for the target host or at their concurrency cap, and minus those
// a retry already went through), and Report feeds the real outcome back
// atomically: a refusal, 407 or garbage evicts the proxy at once, a timeout
// lowers its score, a 403/429 bans it for that host only, a target's 5xx is
// nobody's fault. List shows the pool for `crawler client proxies`.
//
// Credentials: a proxy's identity (ID) is a hash of its full URL, so keys
// and members never hold credentials; the full URL is stored in one Redis
// hash (cluster.ProxyKeys.URLs), which must be protected like the rest of
// the cluster's Redis (ACLs, TLS, a private network). Everything displayed
// or logged uses Proxy.Redacted.
package proxy
