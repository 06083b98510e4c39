package robots

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jimsmart/grobotstxt"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// hostileRobots is issue 29's robots.txt: 30 rules of "/" then 8,000
// "*a" then "bN" (480 KB), which Google's quadratic matcher takes seconds
// to test against a path of 7,000 "a"s.
func hostileRobots() []byte {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := range 30 {
		fmt.Fprintf(&b, "Disallow: /%sb%d\n", strings.Repeat("*a", 8_000), i)
	}
	return []byte(b.String())
}

// TestFile_Allowed_wildcardDoS (issue 29, item 2): matching is linear in
// the pattern and the path, so issue 29's file answers 300 long paths in
// a bounded amount of work each (20 took 65 s: 30 rules × 16,000 pattern
// bytes × 7,000 path bytes each), and the answer is Google's.
func TestFile_Allowed_wildcardDoS(t *testing.T) {
	f := Parse(hostileRobots())
	long := strings.Repeat("a", 7_000)
	for i := range 300 {
		path := fmt.Sprintf("/d/%d%s", i, long)
		allowed, work := f.allowed("crawler", path)
		if !allowed {
			t.Fatalf("%s… disallowed: no rule matches a path without a b", path[:10])
		}
		if bound := 30 * (16_010 + 2*len(path)); work > bound {
			t.Fatalf("%s…: %d units of work, want at most %d (linear)", path[:10], work, bound)
		}
	}
	if f.Allowed("crawler", "/x"+strings.Repeat("a", 8_000)+"b7") {
		t.Error("a path the 8th rule matches is allowed")
	}
}

// TestFile_Allowed_workBound: a file whose rules would take more than
// MaxMatchWork to test against one path (40k rules that each scan the
// whole path) stops there and answers disallowed; a short path is still
// answered by the rules.
func TestFile_Allowed_workBound(t *testing.T) {
	body := "User-agent: *\n" + strings.Repeat("Disallow: *x\n", 40_000)
	f := Parse([]byte(body))
	allowed, work := f.allowed("crawler", "/"+strings.Repeat("a", 7_000))
	if allowed || work > MaxMatchWork+2*7_001+2 {
		t.Errorf("costly check: allowed %v after %d units, want false after at most ~%d", allowed, work, MaxMatchWork)
	}
	if !f.Allowed("crawler", "/a") || f.Allowed("crawler", "/x") {
		t.Error("short paths: want /a allowed and /x disallowed")
	}
}

// TestPattern_matches: the linear matcher answers as Google's does.
func TestPattern_matches(t *testing.T) {
	patterns := []string{"", "/", "$", "*", "/*$", "/a", "/a$", "/a*b", "/a*b$", "/a$b", "/**a", "*a*a$", "/x*x*x", "/ab*ab*abab$",
		"/fish*.php", "/*.php$", "/$*$", "/a*", "/aa*aa$", "/abab*ba$"}
	paths := []string{"/", "", "/a", "/ab", "/a$b", "/aab", "/aaaa", "/fish/salmon.php?x", "/x.php", "/xxx", "/ababab",
		"/abababab", "/$", "/ab/ab/abab", "/aXa", "/aba", "/abba"}
	for _, p := range patterns {
		for _, path := range paths {
			work := 0
			if got, want := compilePattern(p).matches(path, &work), grobotstxt.Matches(path, p); got != want {
				t.Errorf("pattern %q, path %q: %v, Google's matcher says %v", p, path, got, want)
			}
		}
	}
}

// TestCache_Check_cancelled: Check reads its context first, so a caller
// that checks many links stops when its context does, even when the file
// is cached.
func TestCache_Check_cancelled(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	s := newSite(t, 200, "User-agent: *\nDisallow: /x\n")
	c := newCache(t, rdb, keys, nil)
	if d := check(t, c, s.URL+"/a"); !d.Allowed {
		t.Fatalf("/a: %+v, want allowed", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Check(ctx, s.URL+"/a", ua); !errors.Is(err, context.Canceled) {
		t.Errorf("Check with a cancelled context: %v, want context.Canceled", err)
	}
}

// FuzzMatch checks the linear matcher against Google's on any pattern and
// path, and bounds its work and memory: at most the pattern's bytes plus
// twice the path's per match, and failure tables no longer than the
// pattern.
//
//	go test -run='^$' -fuzz=FuzzMatch -fuzztime=30s ./robots/
func FuzzMatch(f *testing.F) {
	for _, seed := range []struct{ pattern, path string }{
		{"/a*b$", "/aab"}, {"/*.php$", "/x.php?y"}, {"/$*$", "/$"}, {"*a*a*ab1", "/d/1aaaaaaa"},
		{"/ab*ab*abab$", "/ababab"}, {"", "/"}, {"$", ""}, {"/**$$", "/$"},
	} {
		f.Add(seed.pattern, seed.path)
	}
	f.Fuzz(func(t *testing.T, p, path string) {
		if len(p) > 4096 || len(path) > 4096 {
			return
		}
		c := compilePattern(p)
		table := 0
		for _, fail := range c.fails {
			table += len(fail)
		}
		if table > len(p) {
			t.Fatalf("pattern %q: failure tables of %d entries", p, table)
		}
		work := 0
		got := c.matches(path, &work)
		if want := grobotstxt.Matches(path, p); got != want {
			t.Fatalf("pattern %q, path %q: %v, Google's matcher says %v", p, path, got, want)
		}
		if bound := len(p) + 2*len(path); work > bound {
			t.Fatalf("pattern %q, path %q: %d units of work, want at most %d", p, path, work, bound)
		}
	})
}
