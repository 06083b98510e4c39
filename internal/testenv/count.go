package testenv

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// CountCommands adds a hook to rdb that counts the commands it sends,
// alone or in a pipeline, for which match (given the command's lower-case
// name and its arguments, the name first) is true, once each is answered.
// A test waits on the count to know a process did something (scanned the
// jobs, read the clock) instead of waiting for time to pass.
func CountCommands(rdb redis.UniversalClient, match func(name string, args []any) bool) *atomic.Int64 {
	h := &commandCount{match: match}
	rdb.AddHook(h)
	return &h.n
}

// commandCount is CountCommands's hook.
type commandCount struct {
	match func(string, []any) bool
	n     atomic.Int64
}

func (h *commandCount) see(cmd redis.Cmder) {
	if h.match(cmd.Name(), cmd.Args()) {
		h.n.Add(1)
	}
}

func (h *commandCount) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *commandCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.see(cmd)
		return err
	}
}

func (h *commandCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			h.see(cmd)
		}
		return err
	}
}

// ScriptOn is a CountCommands match for the scripts (EVALSHA or EVAL)
// whose first key is key.
func ScriptOn(key string) func(string, []any) bool {
	return func(name string, args []any) bool {
		return (name == "evalsha" || name == "eval") && len(args) > 3 && args[3] == key
	}
}
