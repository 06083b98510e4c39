package politeness

import (
	"context"
	"embed"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/luascript"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// scripts are the package's protocol steps (luascript.Set).
var scripts = luascript.Set{FS: luaFiles, Consts: luascript.Consts{"LIVE_SWEEP": cluster.LiveSweep}}

var (
	roundScript = scripts.Load("lua/packed.lua", "lua/round.lua")
	stateScript = scripts.Load("lua/packed.lua", "lua/state.lua")
	probeScript = scripts.Load("lua/probe.lua")
)

// evalMany runs script once per argument set in one pipeline (one round
// trip, or one per shard of a Redis Cluster). Calls that failed with
// NOSCRIPT did not run; they are run again once the script is loaded.
func evalMany(ctx context.Context, rdb redis.UniversalClient, script *redis.Script,
	keys [][]string, args [][]any) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(keys))
	todo := make([]int, len(keys))
	for i := range todo {
		todo[i] = i
	}
	for attempt := 0; len(todo) > 0; attempt++ {
		pipe := rdb.Pipeline()
		for _, i := range todo {
			cmds[i] = script.EvalSha(ctx, pipe, keys[i], args[i]...)
		}
		_, _ = pipe.Exec(ctx) // errors are read per command below
		todo = noScript(cmds, todo)
		if len(todo) == 0 {
			break
		}
		if attempt > 0 {
			return cmds, fmt.Errorf("script not loaded: %w", cmds[todo[0]].Err())
		}
		if err := script.Load(ctx, rdb).Err(); err != nil {
			return cmds, fmt.Errorf("load script: %w", err)
		}
	}
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			return cmds, err
		}
	}
	return cmds, nil
}

// noScript returns the calls of todo that failed with NOSCRIPT.
func noScript(cmds []*redis.Cmd, todo []int) []int {
	var again []int
	for _, i := range todo {
		if redis.HasErrorPrefix(cmds[i].Err(), "NOSCRIPT") {
			again = append(again, i)
		}
	}
	return again
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case string:
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return 0
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case string:
		f, _ := strconv.ParseFloat(n, 64)
		return f
	}
	return 0
}

// usToMS reads a script's integer microseconds as fractional milliseconds.
func usToMS(v any) float64 { return float64(toInt64(v)) / 1e3 }
