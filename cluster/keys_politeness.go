package cluster

import (
	"strconv"
	"strings"
)

// Politeness returns the keys of one shard of the hosts' politeness
// budgets (package politeness). A host's budget lives in shard
// politeness.ShardOf(host, shards): one shard on a single Redis server, a
// few on a Redis Cluster, so that one script settles every host of a shard
// a process needs in one step. Every process of the cluster that sends
// requests to a site shares its shard's keys, whatever job or proxy it
// works for.
func (k Keys) Politeness(shard int) PolitenessKeys {
	return PolitenessKeys{tag: "{" + k.prefix() + ":polite:" + strconv.Itoa(shard) + "}"}
}

// PolitenessKeys names the keys of one shard of the hosts' politeness
// budgets. They share one hash tag, so the script that settles a process's
// round touches them together.
type PolitenessKeys struct{ tag string }

// Tag is the hash-tagged stem shared by the shard's keys.
func (p PolitenessKeys) Tag() string { return p.tag }

// Hosts is a hash of the shard's hosts' budgets: host name -> the host's
// state packed in one string (its GCRA arrival time, backoff factor and
// window, pause, and the processes holding slots of its concurrency cap;
// the layout is politeness/lua/round.lua's). A host at rest has no entry.
func (p PolitenessKeys) Hosts() string { return p.tag + ":hosts" }

// Live is a hash of the processes that hold a share of some host of the
// shard: process ID -> deadline in server milliseconds. A process renews
// its deadline with every round; past it, the slots it held are free
// again, for every host at once.
func (p PolitenessKeys) Live() string { return p.tag + ":live" }

// LiveSweep is the field of PolitenessKeys.Live that holds the cursor of
// the sweep that drops the budgets of hosts nobody uses any more.
const LiveSweep = "#sweep"

// Robots returns the keys of one origin's robots.txt (package robots).
// origin is scheme://host[:port], the unit RFC 9309 scopes a robots.txt to.
func (k Keys) Robots(origin string) RobotsKeys {
	return RobotsKeys{tag: "{" + k.prefix() + ":robots:" + keySafe(origin) + "}"}
}

// RobotsKeys names the keys of one origin's shared robots.txt.
type RobotsKeys struct{ tag string }

// Tag is the hash-tagged stem shared by the origin's robots keys.
func (r RobotsKeys) Tag() string { return r.tag }

// File is a hash holding the fetched robots.txt (status, body, fetch time),
// expiring when it must be fetched again.
func (r RobotsKeys) File() string { return r.tag + ":file" }

// Lease holds the token of the one process fetching the file, with a short
// expiry, so the cluster fetches each robots.txt once.
func (r RobotsKeys) Lease() string { return r.tag + ":lease" }

// Fields of an origin's robots.txt hash (RobotsKeys.File), passed to the
// robots scripts as ARGV.
const (
	RobotsStatus    = "status"     // the HTTP status the file was fetched with, 0 for none
	RobotsBody      = "body"       // the file's first bytes (2xx only)
	RobotsFetchedAt = "fetched_at" // server ms of the fetch
	RobotsExpiresAt = "expires_at" // server ms after which it is fetched again
)

// keySafe percent-escapes the bytes that would end or open a hash tag, or
// make a key awkward to read, so any host or origin string yields one
// well-formed key.
func keySafe(s string) string {
	if !strings.ContainsFunc(s, unsafeKeyRune) {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unsafeKeyRune(rune(c)) || c >= 0x80 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xF])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func unsafeKeyRune(r rune) bool {
	return r == '{' || r == '}' || r == '%' || r <= ' ' || r >= 0x7F
}
