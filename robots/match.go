package robots

import "strings"

// MaxMatchWork bounds the work of one Allowed check, in bytes of path and
// pattern compared: far above what any real file costs (a few thousand),
// far below what a hostile one could ask of a long path (30 rules of
// 16,000 wildcards cost 65 s for 20 URLs with Google's matcher, which is
// quadratic). A check that would pass it stops and answers disallowed.
const MaxMatchWork = 1 << 22

// pattern is an Allow or Disallow pattern compiled for matching in time
// linear in the pattern and the path: its literal parts between '*'s,
// whether a final '$' anchors it at the path's end, and each part's
// failure table for a Knuth-Morris-Pratt search.
type pattern struct {
	parts    []string
	fails    [][]int32 // fails[i] for parts[i], i ≥ 1
	anchored bool
}

// compilePattern compiles a robots.txt pattern: '*' matches any run of
// bytes, a '$' at the end anchors the match at the path's end, any other
// byte ('$' elsewhere included) matches itself, as in Google's matcher.
func compilePattern(p string) *pattern {
	c := &pattern{}
	if strings.HasSuffix(p, "$") {
		c.anchored, p = true, p[:len(p)-1]
	}
	c.parts = strings.Split(p, "*")
	c.fails = make([][]int32, len(c.parts))
	for i := 1; i < len(c.parts); i++ {
		c.fails[i] = failureTable(c.parts[i])
	}
	return c
}

// failureTable is KMP's table: for each prefix of s, the length of its
// longest proper prefix that is also its suffix.
func failureTable(s string) []int32 {
	f := make([]int32, len(s))
	k := int32(0)
	for i := 1; i < len(s); i++ {
		for k > 0 && s[i] != s[k] {
			k = f[k-1]
		}
		if s[i] == s[k] {
			k++
		}
		f[i] = k
	}
	return f
}

// matches reports whether the pattern matches path, adding the bytes it
// compared to *work. The first part must start the path; each later part
// is found at its leftmost place after the one before (taking the
// leftmost place never loses a match); an anchored last part must end the
// path. Each byte of the path is read at most twice, so the work is
// O(len(pattern) + len(path)).
func (c *pattern) matches(path string, work *int) bool {
	*work += len(c.parts[0])
	if !strings.HasPrefix(path, c.parts[0]) {
		return false
	}
	pos := len(c.parts[0])
	last := len(c.parts) - 1
	for i := 1; i < last || (i == last && !c.anchored); i++ {
		at := find(path[pos:], c.parts[i], c.fails[i], work)
		if at < 0 {
			return false
		}
		pos += at + len(c.parts[i])
	}
	if !c.anchored {
		return true
	}
	if last == 0 {
		return pos == len(path)
	}
	tail := c.parts[last]
	*work += len(tail)
	return len(path)-len(tail) >= pos && strings.HasSuffix(path, tail)
}

// find is the index of the first occurrence of part in s, or -1, by
// Knuth-Morris-Pratt with part's failure table; it adds twice the bytes
// of s it read to *work.
func find(s, part string, fail []int32, work *int) int {
	if part == "" {
		return 0
	}
	k := int32(0)
	for i := 0; i < len(s); i++ {
		for k > 0 && s[i] != part[k] {
			k = fail[k-1]
		}
		if s[i] == part[k] {
			k++
		}
		if int(k) == len(part) {
			*work += 2 * (i + 1)
			return i + 1 - len(part)
		}
	}
	*work += 2 * len(s)
	return -1
}
