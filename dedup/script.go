package dedup

import (
	"embed"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/luascript"
	"github.com/crawler-dev/crawler/ledger"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// ErrClockSkew is returned when the Redis server's clock is outside the
// granules a call prepared keys for, twice in a row.
var ErrClockSkew = errors.New("redis clock outside the prepared granules")

// errNotOwner is returned when a call relied on a copy of a slice that
// another filter has written since this one claimed it (see sliceCache);
// the filter retries in Redis, so it never reaches callers.
var errNotOwner = errors.New("slice written by another filter")

// codes maps the scripts' error codes to the package's sentinels.
var codes = luascript.Codes{"DEDUPCLOCK": ErrClockSkew, "DEDUPOWNER": errNotOwner}

// dedupScripts are the package's protocol steps (luascript.Set).
var dedupScripts = luascript.Set{FS: luaFiles, Codes: codes}

// admitScripts are the package's steps composed with the job ledger's
// admission (ledger.Fragments): the admit script's tail, which enqueues
// and counts the new links, is the ledger's; the check before it is ours.
var admitScripts = dedupScripts.With(ledger.Fragments)

// scripts are one mode's Redis scripts: each is the shared prelude, the
// filter layout, the mode's check/insert functions and one tail, so the
// tails are written once for all modes: seen, contains and prepare here,
// admit (enqueue, counters, once-guard) in the job ledger.
type scripts struct {
	admit, seen, contains, prepare *redis.Script
}

// modeScripts are every mode's scripts, built once.
var modeScripts = map[Mode]scripts{ModeBloom: loadScripts(ModeBloom),
	ModeExact: loadScripts(ModeExact), ModeSet: loadScripts(ModeSet)}

func loadScripts(m Mode) scripts {
	s := func(tail string) *redis.Script {
		return dedupScripts.Load("lua/layout.lua", "lua/"+string(m)+".lua", "lua/tail_"+tail+".lua")
	}
	admit := admitScripts.Load("lua/layout.lua", "lua/"+string(m)+".lua", "lua/budget.lua", "lua/admit.lua")
	return scripts{admit: admit, seen: s("seen"), contains: s("contains"), prepare: s("prepare")}
}

// scriptCall is the arguments of one script run: mode keys and arguments
// first, then the tail's.
type scriptCall struct {
	modeKeys, tailKeys []string
	modeArgs, tailArgs []any
	n                  int
}

// plan is one script call laid out for a batch, and what the filter
// answered itself from its copies of slices.
type plan struct {
	call scriptCall
	// sent are the indexes in the batch of the fingerprints passed, in
	// order; nil when all are.
	sent []int
	// resolved is how many fingerprints were found in the copies and not
	// passed: duplicates, or present for Contains.
	resolved int
	// owned are the copies the call relied on as their slices' writer.
	owned []*image
}

// merge appends the batch's n answers to dst: the script's flags for the
// fingerprints passed, found for the others.
func (p plan) merge(dst []bool, n int, flags string, found bool) []bool {
	if p.sent == nil {
		return appendFlags(dst, flags)
	}
	start := len(dst)
	for range n {
		dst = append(dst, found)
	}
	for j, i := range p.sent {
		dst[start+i] = flags[j] == '1'
	}
	return dst
}

func (c scriptCall) keys() []string {
	return append(append(make([]string, 0, len(c.modeKeys)+len(c.tailKeys)), c.modeKeys...), c.tailKeys...)
}

func (c scriptCall) args() []any {
	out := make([]any, 0, 3+len(c.modeArgs)+len(c.tailArgs))
	out = append(out, len(c.modeKeys), c.n, len(c.modeArgs))
	return append(append(out, c.modeArgs...), c.tailArgs...)
}

// redisErr wraps an error of op at the package edge: ErrClockSkew as it
// is, anything else as Redis's.
func redisErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrClockSkew):
		return fmt.Errorf("%s: %w", op, err)
	default:
		return fmt.Errorf("%s: redis: %w", op, err)
	}
}
