package robots

import (
	"strings"
	"unicode"
)

// fileBuilder collects a File's groups from grobotstxt's parse callbacks.
//
// A group is a run of user-agent lines and the rules after them, up to the
// next user-agent line that follows a rule (RFC 9309 §2.1), exactly as
// Google's matcher groups them; rules before the first user-agent line
// belong to no group and are dropped. Crawl-delay, which the RFC leaves
// out, belongs to the user-agent lines just above it: a user-agent line
// after a Crawl-delay starts a new run within the same group, so in
//
//	User-agent: *
//	Crawl-delay: 10
//	User-agent: crawler
//	Crawl-delay: 1
//	Disallow: /private
//
// the rule is everyone's, as Google reads it, but only "*" waits 10 s.
type fileBuilder struct {
	groups   []group
	ruleSeen bool // the current group has a rule: a user-agent line starts a new group
}

func (b *fileBuilder) current() *group {
	if len(b.groups) == 0 {
		return nil
	}
	return &b.groups[len(b.groups)-1]
}

// HandleRobotsStart is called before the first line.
func (b *fileBuilder) HandleRobotsStart() {}

// HandleRobotsEnd is called after the last line.
func (b *fileBuilder) HandleRobotsEnd() {}

// HandleUserAgent adds a user agent to the current group, or starts one.
func (b *fileBuilder) HandleUserAgent(_ int, value string) {
	if b.current() == nil || b.ruleSeen {
		b.groups = append(b.groups, group{})
		b.ruleSeen = false
	}
	g := b.current()
	if len(g.runs) == 0 || g.runs[len(g.runs)-1].delaySeen {
		g.runs = append(g.runs, agentRun{})
	}
	r := &g.runs[len(g.runs)-1]
	// As Google's parser does, "*" followed by a space and anything is
	// still the global agent.
	if value != "" && value[0] == '*' && (len(value) == 1 || unicode.IsSpace(rune(value[1]))) {
		r.global = true
		return
	}
	r.agents = append(r.agents, strings.ToLower(ProductToken(value)))
}

// HandleAllow adds an Allow rule to the current group.
func (b *fileBuilder) HandleAllow(_ int, value string) { b.addRule(newRule(true, value)) }

// HandleDisallow adds a Disallow rule to the current group.
func (b *fileBuilder) HandleDisallow(_ int, value string) { b.addRule(newRule(false, value)) }

func (b *fileBuilder) addRule(r rule) {
	g := b.current()
	if g == nil {
		return
	}
	b.ruleSeen = true
	g.rules = append(g.rules, r)
}

// HandleSitemap ignores Sitemap lines.
func (b *fileBuilder) HandleSitemap(int, string) {}

// HandleUnknownAction keeps Crawl-delay (an extension RFC 9309 leaves to
// crawlers) and ignores every other unknown line.
func (b *fileBuilder) HandleUnknownAction(_ int, action, value string) {
	g := b.current()
	if g == nil || len(g.runs) == 0 {
		return
	}
	switch strings.ToLower(action) {
	case "crawl-delay", "crawldelay", "crawl delay":
		r := &g.runs[len(g.runs)-1]
		r.delaySeen = true
		if d, ok := parseDelay(value); ok {
			r.delay = max(r.delay, d)
		}
	}
}

// upperEscapes writes the hex digits of every %XX escape in upper case.
// grobotstxt means to do this itself but its toUpper also flips digits
// ("%3c" becomes "%\x13C"), which breaks every pattern holding such an
// escape; normalising first leaves it nothing to change. RFC 9309 §2.2.2
// compares escapes case-insensitively, so this changes no meaning.
func upperEscapes(s []byte) []byte {
	out := s
	copied := false
	for i := 0; i+2 < len(s); i++ {
		if s[i] != '%' || !isHex(s[i+1]) || !isHex(s[i+2]) {
			continue
		}
		for j := i + 1; j <= i+2; j++ {
			if 'a' <= s[j] && s[j] <= 'f' {
				if !copied {
					out = append([]byte(nil), s...)
					copied = true
				}
				out[j] = s[j] - 'a' + 'A'
			}
		}
	}
	return out
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
