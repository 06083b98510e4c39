package dedup

import (
	"embed"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// ErrClockSkew is returned when the Redis server's clock is outside the
// granules a call prepared keys for, twice in a row.
var ErrClockSkew = errors.New("redis clock outside the prepared granules")

// scripts are one mode's Redis scripts: each is the shared prelude, the
// mode's check/insert functions and one tail, so the tails (enqueue,
// counters, once-guard) are written once for all modes.
type scripts struct {
	admit, seen, contains, prepare, sweep *redis.Script
}

func loadScripts(m Mode) scripts {
	body := mustLua("prelude") + mustLua(string(m))
	s := func(tail string) *redis.Script {
		return redis.NewScript(body + mustLua("tail_"+tail))
	}
	return scripts{admit: s("admit"), seen: s("seen"), contains: s("contains"),
		prepare: s("prepare"), sweep: s("sweep")}
}

func mustLua(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("dedup: missing embedded script " + name)
	}
	return string(b) + "\n"
}

// scriptCall is the arguments of one script run: mode keys and arguments
// first, then the tail's.
type scriptCall struct {
	modeKeys, tailKeys []string
	modeArgs, tailArgs []any
	n                  int
}

func (c scriptCall) keys() []string {
	return append(append(make([]string, 0, len(c.modeKeys)+len(c.tailKeys)), c.modeKeys...), c.tailKeys...)
}

func (c scriptCall) args() []any {
	out := make([]any, 0, 3+len(c.modeArgs)+len(c.tailArgs))
	out = append(out, len(c.modeKeys), c.n, len(c.modeArgs))
	return append(append(out, c.modeArgs...), c.tailArgs...)
}

// isClockErr reports the script's complaint that the server's granule is
// not among the keys it was given.
func isClockErr(err error) bool {
	return err != nil && strings.Contains(err.Error(), "DEDUPCLOCK")
}

// redisErr translates a driver error at the package edge.
func redisErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case isClockErr(err):
		return fmt.Errorf("%s: %w: %v", op, ErrClockSkew, err)
	default:
		return fmt.Errorf("%s: redis: %w", op, err)
	}
}
