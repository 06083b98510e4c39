package luascript

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

//go:embed prelude.lua
var prelude string

// Prelude returns the Lua source every script starts with.
func Prelude() string { return prelude }

// Consts are the Go constants a package's scripts read, by the Lua name
// they are read under: ALL_CAPS, prefixed by what they are (F_ a hash
// field, S_ a state, R_ a reply, P_ a field prefix, ...). A value is a
// string or an integer.
type Consts map[string]any

// constName is the form of a constant's Lua name.
var constName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// header returns the Lua lines that define c, one `local NAME = value`
// per constant, sorted by name. A constant of another type, or a name
// not in ALL_CAPS, is a build defect: header panics.
func (c Consts) header() string {
	names := make([]string, 0, len(c))
	for name := range c {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		if !constName.MatchString(name) {
			panic(fmt.Sprintf("luascript: constant name %q is not ALL_CAPS", name))
		}
		fmt.Fprintf(&b, "local %s = %s\n", name, luaValue(name, c[name]))
	}
	return b.String()
}

// luaValue writes v as a Lua literal.
func luaValue(name string, v any) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	panic(fmt.Sprintf("luascript: constant %s is a %T, want a string or an integer", name, v))
}

// quote writes s as a single-quoted Lua string, escaping every byte that
// is not printable ASCII as \ddd.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '\'' || c == '\\' {
			fmt.Fprintf(&b, "\\%03d", c)
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('\'')
	return b.String()
}

// Set is one package's scripts: the files they are built from, the Go
// constants they read and the error codes they fail with. Every package
// of the cluster protocol declares one and loads its scripts through it,
// so constants reach Lua one way: as locals in the script's header,
// written from Go values, never passed as ARGV or retyped as literals.
type Set struct {
	// FS holds the package's .lua files (go:embed lua/*.lua).
	FS fs.FS
	// Consts are the constants every script of the set may read.
	Consts Consts
	// Codes are the error codes the set's scripts fail with.
	Codes Codes
}

// With returns a set that composes s's files with other's: a script of it
// may name files of either (fs.FS of s first), and reads both sets'
// constants and fails with both sets' codes. A package whose step ends in
// another's fragment (dedup's admission check in the job ledger's
// admission) loads it so. A file, constant or code that both sets hold is
// a build defect: With panics.
func (s Set) With(other Set) Set {
	return Set{FS: layered{s.FS, other.FS}, Consts: union("constant", s.Consts, other.Consts),
		Codes: union("error code", s.Codes, other.Codes)}
}

// union is the entries of a and b, which share no name (what names the
// entries, in the panic if they do).
func union[M ~map[string]V, V any](what string, a, b M) M {
	out := make(M, len(a)+len(b))
	for _, m := range []M{a, b} {
		for name, v := range m {
			if _, dup := out[name]; dup {
				panic(fmt.Sprintf("luascript: %s %s in both sets", what, name))
			}
			out[name] = v
		}
	}
	return out
}

// layered is two sets' files: a name is looked up in the first, then the
// second; a name both hold is refused.
type layered [2]fs.FS

func (l layered) Open(name string) (fs.File, error) {
	f, err := l[0].Open(name)
	if err != nil {
		return l[1].Open(name)
	}
	if _, err := fs.Stat(l[1], name); err == nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s is in both sets: %w", name, fs.ErrExist)
	}
	return f, nil
}

// Load returns the script composed of the files named (e.g.
// "lua/take.lua"; a guard and a body, a mode and a tail, in order): the
// prelude, the set's constants, then the files. Scripts are embedded in
// the binary, so a missing one is a build defect: Load panics.
func (s Set) Load(names ...string) *redis.Script {
	src := s.Source(names...)
	register(loadedScript{files: names, source: src, consts: s.Consts, codes: s.Codes})
	return redis.NewScript(src)
}

// Source returns the text Load runs.
func (s Set) Source(names ...string) string {
	var b strings.Builder
	b.WriteString(prelude)
	b.WriteString("\n")
	b.WriteString(s.Consts.header())
	for _, name := range names {
		src, err := fs.ReadFile(s.FS, name)
		if err != nil {
			panic(fmt.Sprintf("luascript: embedded script %s: %v", name, err))
		}
		b.WriteString("\n")
		b.Write(src)
	}
	return b.String()
}

// loadedScript is one script Load built, kept for the tests that check
// every script of the protocol (export_test.go).
type loadedScript struct {
	files  []string
	source string
	consts Consts
	codes  Codes
}

var (
	loadedMu sync.Mutex
	loaded   []loadedScript
)

func register(s loadedScript) {
	loadedMu.Lock()
	defer loadedMu.Unlock()
	loaded = append(loaded, s)
}

// Codes maps the error codes a package's scripts fail with (the first word
// of the error reply) to that package's sentinel errors.
type Codes map[string]error

// Translate returns err with a script's error reply turned into the
// sentinel of its code, wrapped with the reply's detail:
// "FENCED job owned by another master" becomes an error that Is the
// sentinel for FENCED. Other errors, nil included, pass through unchanged.
func (c Codes) Translate(err error) error {
	code, detail, ok := ErrorCode(err)
	if !ok {
		return err
	}
	sentinel, known := c[code]
	if !known {
		return err
	}
	if detail == "" {
		return sentinel
	}
	return fmt.Errorf("%w: %s", sentinel, detail)
}

// ErrorCode splits a script's error reply into its code and detail. It
// reports false for errors that are not a Redis error reply.
func ErrorCode(err error) (code, detail string, ok bool) {
	var rerr redis.Error
	if err == nil || !errors.As(err, &rerr) {
		return "", "", false
	}
	msg := strings.TrimPrefix(rerr.Error(), "ERR ")
	code, detail, _ = strings.Cut(msg, " ")
	return code, strings.TrimSpace(detail), true
}
