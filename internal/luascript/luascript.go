package luascript

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed prelude.lua
var prelude string

// Prelude returns the Lua source every script starts with.
func Prelude() string { return prelude }

// Load returns the script in file name of fsys (e.g. "lua/take.lua"), with
// the shared prelude in front; a script composed of several files (a guard
// and a body, a mode and a tail) names them all, in order. Scripts are
// embedded in the binary, so a missing one is a build defect: Load panics.
func Load(fsys fs.FS, names ...string) *redis.Script {
	return redis.NewScript(Source(fsys, names...))
}

// Source returns the text Load runs: the prelude, then the files named, in
// order. Packages that compose a script from several files (a mode and a
// tail, say) pass them all.
func Source(fsys fs.FS, names ...string) string {
	var b strings.Builder
	b.WriteString(prelude)
	for _, name := range names {
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			panic(fmt.Sprintf("luascript: embedded script %s: %v", name, err))
		}
		b.WriteString("\n")
		b.Write(src)
	}
	return b.String()
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
