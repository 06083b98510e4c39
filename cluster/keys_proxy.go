package cluster

// Proxies returns the keys of the shared proxy pool. They all share the hash
// tag {PREFIX:proxy}, so the pool's scripts (pick, report, admit, record)
// may touch any of them together in one Redis Cluster slot.
func (k Keys) Proxies() ProxyKeys {
	return ProxyKeys{tag: "{" + k.prefix() + ":proxy}"}
}

// ProxyKeys names the keys of the proxy pool. Proxies appear in them only by
// ID (a hash of the proxy's full URL); the full URL, credentials included,
// is kept in one place, URLs.
type ProxyKeys struct{ tag string }

// Tag is the hash-tagged stem shared by all of the pool's keys.
func (p ProxyKeys) Tag() string { return p.tag }

// Usable is a sorted set of the proxies requests may go through, scored by
// quality (success rate and latency; higher is better).
func (p ProxyKeys) Usable() string { return p.tag + ":usable" }

// Schedule is a sorted set of every proxy the validator tracks (new, usable
// or failing), scored by when it is next checked (unix ms).
func (p ProxyKeys) Schedule() string { return p.tag + ":schedule" }

// Graveyard is a sorted set of rejected and dead proxies, scored by when
// they were removed; a source listing one again is ignored until it ages out.
func (p ProxyKeys) Graveyard() string { return p.tag + ":graveyard" }

// URLs is a hash of proxy ID to its full URL, credentials included.
func (p ProxyKeys) URLs() string { return p.tag + ":urls" }

// Caps is a hash of proxy ID to its own cap on requests in flight.
func (p ProxyKeys) Caps() string { return p.tag + ":caps" }

// Tunnel is the set of proxy IDs that support CONNECT (https targets).
func (p ProxyKeys) Tunnel() string { return p.tag + ":tunnel" }

// Cooldown is a sorted set of proxy ID to the time (unix ms) until which it
// is not picked, after a timeout.
func (p ProxyKeys) Cooldown() string { return p.tag + ":cooldown" }

// Ban is a sorted set of proxy ID to the time (unix ms) until which it is
// not picked for requests to host.
func (p ProxyKeys) Ban(host string) string { return p.tag + ":ban:" + host }

// Slots is a sorted set of the requests in flight, "ID TOKEN" scored by the
// deadline after which an unreported request's slot is released.
func (p ProxyKeys) Slots() string { return p.tag + ":slots" }

// Busy is a hash of proxy ID to its requests in flight (Slots, counted).
func (p ProxyKeys) Busy() string { return p.tag + ":busy" }

// Record is the hash of one proxy's state, counters and check results.
func (p ProxyKeys) Record(id string) string { return p.tag + ":p:" + id }

// Lease holds the token of the one validator allowed to run, with a TTL.
func (p ProxyKeys) Lease() string { return p.tag + ":lease" }

// Status is a hash of the validator's last round: circuit breaker, sources
// read, counts.
func (p ProxyKeys) Status() string { return p.tag + ":status" }
