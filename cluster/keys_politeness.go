package cluster

import "strings"

// Host returns the keys of one crawled site's politeness budget (package
// politeness). host is the site's host name as the caller keys it (the
// politeness package lowercases it and drops the port); it is escaped so no
// host can break the hash tag. Every process of the cluster that sends
// requests to the site shares these keys, whatever job or proxy it works for.
func (k Keys) Host(host string) HostKeys {
	return HostKeys{tag: "{" + k.prefix() + ":host:" + keySafe(host) + "}"}
}

// Robots returns the keys of one origin's robots.txt (package robots).
// origin is scheme://host[:port], the unit RFC 9309 scopes a robots.txt to.
func (k Keys) Robots(origin string) RobotsKeys {
	return RobotsKeys{tag: "{" + k.prefix() + ":robots:" + keySafe(origin) + "}"}
}

// HostKeys names the keys of one site's politeness budget. They share one
// hash tag, so the script that grants requests touches them together.
type HostKeys struct{ tag string }

// Tag is the hash-tagged stem shared by the host's keys.
func (h HostKeys) Tag() string { return h.tag }

// Rate is a hash with the host's rate state: the GCRA's theoretical arrival
// time and the backoff factor that 429s lower and successes raise.
func (h HostKeys) Rate() string { return h.tag + ":rate" }

// Holders is a hash of the processes that hold slots of the host's
// concurrency cap, or want some: process ID -> "held|want|deadline", the
// deadline in server milliseconds. A process renews its entry while it
// lives; past the deadline its slots are free again.
func (h HostKeys) Holders() string { return h.tag + ":holders" }

// Pause exists (with an expiry) while nobody may send to the host, as a
// Retry-After asked.
func (h HostKeys) Pause() string { return h.tag + ":pause" }

// Fields of a host's rate hash (HostKeys.Rate), passed to the politeness
// scripts as ARGV.
const (
	RateTAT    = "tat"    // the GCRA's theoretical arrival time, server ms
	RateFactor = "factor" // backoff: the share of the rule's rate in use, (0, 1]
	RateCutAt  = "cut_at" // server ms of the last cut
	// The window of recent answers that decides a cut: when it began
	// (server ms), the answers that went well and the throttled ones
	// (429, 503).
	RateWindowAt        = "win_at"
	RateWindowOK        = "win_ok"
	RateWindowThrottled = "win_thr"
)

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
