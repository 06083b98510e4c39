package jobspec

import (
	"fmt"
	"strings"
)

// refusedModifiers are the gjson modifiers a json or jsonld path may not
// use, and why: their work or output grows faster than the page.
var refusedModifiers = map[string]string{
	"pretty": "its output grows with the page's depth times its size, and it recurses once per level",
	"dig":    "its work and output grow with the page's depth times its size",
	"valid":  "it recurses once per level of what it reads (pages are validated before any path runs)",
}

// CheckJSONPath refuses a gjson path (a json or jsonld selector) that
// uses a modifier whose cost a page could blow up: @pretty, @dig, @valid,
// @flatten with {"deep":true}, and a second @fromstr (it validates,
// recursively, what the first one decoded, which no depth check has
// read). Every other path costs at most a few passes over the page.
func CheckJSONPath(path string) error {
	fromstr := 0
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '\\':
			i++
		case c == '"':
			i = quotedEnd(path, i)
		case c == '@' && componentStart(path, i):
			name := modifierName(path[i+1:])
			if why, ok := refusedModifiers[name]; ok {
				return fmt.Errorf("%q: the @%s modifier is not supported: %s", path, name, why)
			}
			if name == "flatten" && deepFlatten(path[i+1+len(name):]) {
				return fmt.Errorf("%q: @flatten with deep is not supported: its work and output grow with the page's depth times its size", path)
			}
			if name == "fromstr" {
				if fromstr++; fromstr > 1 {
					return fmt.Errorf("%q: @fromstr is supported once per path: a second one validates, level by level, JSON no depth check has read", path)
				}
			}
		}
	}
	return nil
}

// quotedEnd is the index of the quote closing the string opened at i.
func quotedEnd(s string, i int) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(s)
}

// componentStart reports whether the '@' at i starts a path component,
// where gjson reads a modifier.
func componentStart(path string, i int) bool {
	return i == 0 || strings.IndexByte(".|[{,:( ", path[i-1]) >= 0
}

// modifierName is the name at the start of s (after '@').
func modifierName(s string) string {
	n := 0
	for n < len(s) && (s[n] == '_' || 'a' <= s[n] && s[n] <= 'z' || 'A' <= s[n] && s[n] <= 'Z' || '0' <= s[n] && s[n] <= '9') {
		n++
	}
	return s[:n]
}

// deepFlatten reports whether the argument after @flatten (":{...}")
// mentions deep: {"deep":false} is refused too, which costs nothing, as
// @flatten without an argument is the same.
func deepFlatten(rest string) bool {
	if !strings.HasPrefix(rest, ":{") {
		return false
	}
	end := strings.IndexByte(rest, '}')
	if end < 0 {
		end = len(rest)
	}
	return strings.Contains(rest[:end], "deep")
}
