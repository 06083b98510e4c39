package robots

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jimsmart/grobotstxt"
)

// MaxBodyBytes is how much of a robots.txt is kept and parsed: RFC 9309
// §2.5 asks crawlers to parse at least the first 500 KiB and lets them stop
// there.
const MaxBodyBytes = 500 << 10

// File is a parsed robots.txt, ready to answer for any user agent. It is
// immutable and safe for concurrent use.
//
// Lines are tokenised and paths escaped by grobotstxt (a port of Google's
// reference parser, the lineage RFC 9309 standardised); File keeps the
// groups itself so that a file is parsed once, not once per URL, and so
// that Crawl-delay, which Google's matcher ignores, is kept too. Patterns
// are compiled once and matched as Google's Matches does, but in linear
// time (see pattern): Google's matcher is quadratic in the pattern and
// the path.
type File struct {
	groups []group
}

// group is the user-agent lines and the rules after them (see fileBuilder).
type group struct {
	runs  []agentRun
	rules []rule
}

// agentRun is a run of user-agent lines and the Crawl-delay after them.
type agentRun struct {
	global    bool     // a "*" line is among them
	agents    []string // product tokens of the other lines, lowercased
	delay     time.Duration
	delaySeen bool
}

// rule is one Allow or Disallow line; pattern is escaped as RFC 9309 §2.2.2
// asks (non-ASCII percent-encoded, escapes in upper case). compiled is the
// pattern compiled, dir the pattern of the directory an Allow of
// ".../index.htm..." allows too, or nil.
type rule struct {
	allow    bool
	pattern  string
	compiled *pattern
	dir      *pattern
}

// newRule compiles an Allow or Disallow line.
func newRule(allow bool, p string) rule {
	r := rule{allow: allow, pattern: p, compiled: compilePattern(p)}
	slash := strings.LastIndexByte(p, '/')
	if allow && slash >= 0 && strings.HasPrefix(p[slash:], "/index.htm") {
		r.dir = compilePattern(p[:slash+1] + "$")
	}
	return r
}

// Parse parses a robots.txt body. It accepts any bytes: what does not look
// like a directive is skipped, as RFC 9309 §2.2 asks. Only the first
// MaxBodyBytes count, cut at the last line break before that limit so no
// rule is read half.
func Parse(body []byte) *File {
	b := &fileBuilder{}
	grobotstxt.Parse(string(upperEscapes(truncate(body))), b)
	return &File{groups: b.groups}
}

// truncate cuts body to MaxBodyBytes, at a line break when there is one.
func truncate(body []byte) []byte {
	if len(body) <= MaxBodyBytes {
		return body
	}
	body = body[:MaxBodyBytes]
	if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
		return body[:i]
	}
	return body
}

// Allowed reports whether the robots.txt lets the crawler whose product
// token is token (see ProductToken) fetch path, which is the URL's path,
// params and query, starting with "/" (see PathOf).
//
// The groups naming the token are merged; if none does, the "*" groups
// apply; if none of those either, everything is allowed. Among the rules
// that match, the longest pattern wins and an Allow wins a tie (RFC 9309
// §2.2.2). A check whose matching would pass MaxMatchWork stops there
// and answers false: the file's rules could not all be read for path.
func (f *File) Allowed(token, path string) bool {
	allowed, _ := f.allowed(token, path)
	return allowed
}

// allowed is Allowed, and the work it took.
func (f *File) allowed(token, path string) (allowed bool, work int) {
	specific, global := verdict{-1, -1}, verdict{-1, -1}
	seenSpecific := false
	for i := range f.groups {
		g := &f.groups[i]
		mine := g.names(token)
		if !mine && !g.global() {
			continue
		}
		v := &global
		if mine {
			seenSpecific = true
			v = &specific
		}
		for _, r := range g.rules {
			if v.add(r, path, &work); work > MaxMatchWork {
				return false, work
			}
		}
	}
	if specific.matched() {
		return specific.allowed(), work
	}
	if seenSpecific {
		return true, work
	}
	return global.allowed(), work
}

// CrawlDelay is the Crawl-delay the groups that apply to token ask for (the
// largest, if several do), or 0. Crawl-delay is not part of RFC 9309; values
// that are not a non-negative number of seconds are ignored.
func (f *File) CrawlDelay(token string) time.Duration {
	var specific, global time.Duration
	seenSpecific := false
	for i := range f.groups {
		for _, r := range f.groups[i].runs {
			switch {
			case r.names(token):
				seenSpecific = true
				specific = max(specific, r.delay)
			case r.global:
				global = max(global, r.delay)
			}
		}
	}
	if seenSpecific {
		return specific
	}
	return global
}

// names reports whether the group names the product token.
func (g *group) names(token string) bool {
	for _, r := range g.runs {
		if r.names(token) {
			return true
		}
	}
	return false
}

// global reports whether the group is for every crawler ("*").
func (g *group) global() bool {
	for _, r := range g.runs {
		if r.global {
			return true
		}
	}
	return false
}

// names reports whether the run names the product token.
func (r agentRun) names(token string) bool {
	if token == "" {
		return false
	}
	for _, a := range r.agents {
		if strings.EqualFold(a, token) {
			return true
		}
	}
	return false
}

// verdict keeps the longest matching Allow and Disallow of one kind of
// group (specific or global).
type verdict struct {
	allow, disallow int // length of the longest match, -1 for none
}

func (v *verdict) add(r rule, path string, work *int) {
	p := priority(r, path, work)
	if r.allow {
		v.allow = max(v.allow, p)
	} else {
		v.disallow = max(v.disallow, p)
	}
}

// matched reports a match by a non-empty pattern.
func (v *verdict) matched() bool { return v.allow > 0 || v.disallow > 0 }

func (v *verdict) allowed() bool { return !v.matched() || v.allow >= v.disallow }

// priority is the length of r's pattern if it matches path, else -1.
// As in Google's parser, an Allow of ".../index.htm..." also allows its
// directory ("/a/index.html" allows "/a/").
func priority(r rule, path string, work *int) int {
	if r.compiled.matches(path, work) {
		return len(r.pattern)
	}
	if r.dir != nil && r.dir.matches(path, work) {
		return strings.LastIndexByte(r.pattern, '/') + 2 // the directory and '$'
	}
	return -1
}

// parseDelay reads a Crawl-delay value in seconds.
func parseDelay(v string) (time.Duration, bool) {
	s, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || s < 0 || math.IsNaN(s) || s > math.MaxInt64/float64(time.Second) {
		return 0, false
	}
	return time.Duration(s * float64(time.Second)), true
}
