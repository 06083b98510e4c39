package luascript_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	// Every package of the cluster protocol, so that Loaded holds all of
	// their scripts.
	_ "github.com/crawler-dev/crawler/client"
	_ "github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/internal/luascript"
	_ "github.com/crawler-dev/crawler/ledger"
	_ "github.com/crawler-dev/crawler/master"
	_ "github.com/crawler-dev/crawler/membership"
	_ "github.com/crawler-dev/crawler/neardup"
	_ "github.com/crawler-dev/crawler/politeness"
	_ "github.com/crawler-dev/crawler/proxy"
	_ "github.com/crawler-dev/crawler/queue"
	_ "github.com/crawler-dev/crawler/robots"
)

// code returns src with its comments and string literals blanked, so
// what is left is names, operators and numbers.
func code(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); {
		switch {
		case strings.HasPrefix(src[i:], "--[["):
			end := strings.Index(src[i:], "]]")
			if end < 0 {
				return b.String()
			}
			i += end + 2
		case strings.HasPrefix(src[i:], "--"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				return b.String()
			}
			i += end
		case strings.HasPrefix(src[i:], "[["):
			end := strings.Index(src[i:], "]]")
			if end < 0 {
				return b.String()
			}
			i += end + 2
			b.WriteString("''")
		case src[i] == '\'' || src[i] == '"':
			q := src[i]
			j := i + 1
			for j < len(src) && src[j] != q {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
			b.WriteString("''")
		default:
			b.WriteByte(src[i])
			i++
		}
	}
	return b.String()
}

var (
	ident    = regexp.MustCompile(`(^|[^.:\w])([A-Za-z_]\w*)`)
	allCaps  = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	localDef = regexp.MustCompile(`\blocal\s+(?:function\s+)?([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)`)
	forDef   = regexp.MustCompile(`\bfor\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?:=|in\b)`)
	funcArgs = regexp.MustCompile(`\bfunction\s*[\w.:]*\s*\(([^)]*)\)`)
	failCode = regexp.MustCompile(`\bfail\(\s*'([A-Z]+)'`)
	negReply = regexp.MustCompile(`\breturn\s+-\s*\d`)
)

// undefined returns the ALL_CAPS names src reads that it does not define
// (as a local, a loop variable or a parameter): a constant Go no longer
// writes into the header, say, because it was renamed.
func undefined(src string) []string {
	c := code(src)
	defined := map[string]bool{"KEYS": true, "ARGV": true}
	for _, re := range []*regexp.Regexp{localDef, forDef, funcArgs} {
		for _, m := range re.FindAllStringSubmatch(c, -1) {
			for _, name := range strings.Split(m[1], ",") {
				defined[strings.TrimSpace(name)] = true
			}
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range ident.FindAllStringSubmatch(c, -1) {
		name := m[2]
		if allCaps.MatchString(name) && !defined[name] && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func TestUndefined(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want string
	}{
		{"local F_STATE = 'state'\nreturn F_STATE", ""},
		{"local F_STATUS = 'state'\nreturn F_STATE", "F_STATE"},
		{"-- F_GONE in a comment\nreturn 'F_GONE in a string'", ""},
		{"local K, A = {}, {}\nfor i, V in ipairs(A) do K[i] = V end\nreturn K", ""},
		{"local function f(X, y) return X end\nreturn f(N_MAX, 1)", "N_MAX"},
		{"return redis.call('GET', KEYS[1]) .. ARGV[1] .. t.FIELD", ""},
	} {
		if got := strings.Join(undefined(tc.src), " "); got != tc.want {
			t.Errorf("undefined(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}

// TestScripts_constantsDefined fails when a script reads an ALL_CAPS
// name that neither its package's constants nor the script define: a Go
// constant renamed in luascript.Consts, or a name retyped in Lua.
func TestScripts_constantsDefined(t *testing.T) {
	for _, s := range luascript.Loaded() {
		if missing := undefined(s.Source); len(missing) > 0 {
			t.Errorf("%v reads %v, which nothing defines", s.Files, missing)
		}
	}
}

// TestScripts_failCodesTranslated fails when a script can fail with an
// error code its package's Codes do not translate into a sentinel.
func TestScripts_failCodesTranslated(t *testing.T) {
	for _, s := range luascript.Loaded() {
		for _, m := range failCode.FindAllStringSubmatch(s.Source, -1) {
			if _, ok := s.Codes[m[1]]; !ok {
				t.Errorf("%v fails with code %s, which its package's Codes do not translate", s.Files, m[1])
			}
		}
	}
}

// TestScripts_repliesNamed fails when a script replies with a bare
// negative number: an outcome the Go caller must tell apart is a named
// constant of both (R_...), so neither side can drift.
func TestScripts_repliesNamed(t *testing.T) {
	for _, s := range luascript.Loaded() {
		if m := negReply.FindString(code(s.Source)); m != "" {
			t.Errorf("%v replies %q: name the outcome in its package's Consts", s.Files, m)
		}
	}
}

// TestScripts_allLoadedAndDocumented fails when a .lua file of the
// repository is not part of any script Load built (a package that
// bypasses Load, or a file left over), or when it does not open with a
// comment saying what it does and replies.
func TestScripts_allLoadedAndDocumented(t *testing.T) {
	var all strings.Builder
	for _, s := range luascript.Loaded() {
		all.WriteString(s.Source)
	}
	files, err := filepath.Glob("../../*/lua/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts found: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(all.String(), string(src)) {
			t.Errorf("%s is not loaded through luascript.Set.Load", f)
		}
		if !strings.HasPrefix(string(src), "-- ") {
			t.Errorf("%s does not open with a comment saying what it does", f)
		}
	}
}

// TestScripts_constantsUsed fails when a package writes a constant into
// its scripts' header that none of them reads.
func TestScripts_constantsUsed(t *testing.T) {
	type set struct {
		files  []string
		used   map[string]bool
		consts luascript.Consts
	}
	sets := map[string]*set{}
	for _, s := range luascript.Loaded() {
		key := strings.Join(sortedNames(s.Consts), " ")
		if sets[key] == nil {
			sets[key] = &set{used: map[string]bool{}, consts: s.Consts}
		}
		st := sets[key]
		st.files = append(st.files, s.Files...)
		body := code(s.Body)
		for _, m := range ident.FindAllStringSubmatch(body, -1) {
			st.used[m[2]] = true
		}
	}
	for _, st := range sets {
		for name := range st.consts {
			if !st.used[name] {
				t.Errorf("constant %s is read by none of %v", name, st.files)
			}
		}
	}
}

func sortedNames(c luascript.Consts) []string {
	var out []string
	for n := range c {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
