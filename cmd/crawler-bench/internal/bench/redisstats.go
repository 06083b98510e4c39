package bench

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisStats is what Redis's INFO says about the work it has done: the
// CPU time it used and its calls by command.
type RedisStats struct {
	// CPU is used_cpu_user + used_cpu_sys (every thread of the server).
	CPU time.Duration
	// Commands are commandstats by command name ("evalsha", "hget",
	// "client|setinfo"). Calls include the commands scripts run inside.
	Commands map[string]CommandStat
}

// CommandStat is one command's line of INFO commandstats.
type CommandStat struct {
	// Calls is how often it ran, inside scripts too.
	Calls int64
	// Usec is the time Redis spent in it; a script's time includes the
	// commands it ran.
	Usec int64
}

// Calls is the number of commands Redis ran, script-internal ones
// included.
func (s RedisStats) Calls() int64 {
	var n int64
	for _, c := range s.Commands {
		n += c.Calls
	}
	return n
}

// Sub returns s minus an earlier reading, leaving out commands that did
// not run in between.
func (s RedisStats) Sub(earlier RedisStats) RedisStats {
	out := RedisStats{CPU: s.CPU - earlier.CPU, Commands: map[string]CommandStat{}}
	for name, c := range s.Commands {
		e := earlier.Commands[name]
		if c.Calls != e.Calls {
			out.Commands[name] = CommandStat{Calls: c.Calls - e.Calls, Usec: c.Usec - e.Usec}
		}
	}
	return out
}

// without returns s less the calls a client of the benchmark made itself.
func (s RedisStats) without(own map[string]int64) RedisStats {
	out := RedisStats{CPU: s.CPU, Commands: maps.Clone(s.Commands)}
	for name, n := range own {
		c := out.Commands[name]
		c.Calls -= n
		if c.Calls <= 0 {
			delete(out.Commands, name)
			continue
		}
		out.Commands[name] = c
	}
	return out
}

// readRedisStats reads INFO cpu and commandstats.
func readRedisStats(ctx context.Context, rdb redis.UniversalClient) (RedisStats, error) {
	info, err := rdb.Info(ctx, "cpu", "commandstats").Result()
	if err != nil {
		return RedisStats{}, fmt.Errorf("redis info: %w", err)
	}
	return parseRedisStats(info)
}

func parseRedisStats(info string) (RedisStats, error) {
	st := RedisStats{Commands: map[string]CommandStat{}}
	var cpu float64
	for _, line := range strings.Split(info, "\n") {
		key, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch {
		case key == "used_cpu_user" || key == "used_cpu_sys":
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return st, fmt.Errorf("redis info %s: %w", key, err)
			}
			cpu += f
		case strings.HasPrefix(key, "cmdstat_"):
			c, err := parseCommandStat(val)
			if err != nil {
				return st, fmt.Errorf("redis info %s: %w", key, err)
			}
			st.Commands[strings.TrimPrefix(key, "cmdstat_")] = c
		}
	}
	st.CPU = time.Duration(cpu * float64(time.Second))
	return st, nil
}

// parseCommandStat reads "calls=12,usec=34,usec_per_call=2.83,...".
func parseCommandStat(val string) (CommandStat, error) {
	var c CommandStat
	for _, kv := range strings.Split(val, ",") {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "calls":
			c.Calls, err = strconv.ParseInt(v, 10, 64)
		case "usec":
			c.Usec, err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

// ownCommands is a go-redis hook that counts the commands the benchmark's
// own client sends (status polls, INFO), so that they can be taken out of
// Redis's totals. Names are commandstats names. It also learns the names
// of the scripts it sends: a script the benchmark loaded first (the node
// table's snapshot, say) never reaches a tap in full.
type ownCommands struct {
	scripts *scriptNames
	mu      sync.Mutex
	n       map[string]int64
}

func newOwnCommands(scripts *scriptNames) *ownCommands {
	return &ownCommands{scripts: scripts, n: map[string]int64{}}
}

// Counts returns the counts so far.
func (o *ownCommands) Counts() map[string]int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.n)
}

func (o *ownCommands) add(cmds ...redis.Cmder) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range cmds {
		args := c.Args()
		name := commandstatName(args)
		o.n[name]++
		if src, ok := scriptSource(name, args); ok {
			o.scripts.learn(src)
		}
	}
}

// scriptSource is the source of a script a command sends in full.
func scriptSource(name string, args []any) (string, bool) {
	i := map[string]int{"eval": 1, "eval_ro": 1, "script|load": 2}[name]
	if i == 0 || len(args) <= i {
		return "", false
	}
	src, ok := args[i].(string)
	return src, ok
}

// commandstatName is the commandstats name of a command's arguments.
func commandstatName(args []any) string {
	name := strings.ToLower(fmt.Sprint(args[0]))
	if subcommands[name] && len(args) > 1 {
		return name + "|" + strings.ToLower(fmt.Sprint(args[1]))
	}
	return name
}

// DialHook passes dials through.
func (o *ownCommands) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook counts a command once it ran.
func (o *ownCommands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		o.add(cmd)
		return err
	}
}

// ProcessPipelineHook counts a pipeline's commands once they ran.
func (o *ownCommands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		o.add(cmds...)
		return err
	}
}

// redisMeter reads Redis's totals through the benchmark's own client,
// whose commands it counts to take them out again.
type redisMeter struct {
	rdb redis.UniversalClient
	own *ownCommands
}

// meterReading is one reading of Redis's totals and of the benchmark's
// own commands.
type meterReading struct {
	at    time.Time
	stats RedisStats
	own   map[string]int64
}

func (m redisMeter) read(ctx context.Context) (meterReading, error) {
	st, err := readRedisStats(ctx, m.rdb)
	return meterReading{at: time.Now(), stats: st, own: m.own.Counts()}, err
}

// since is what Redis did between two readings for the others, the
// benchmark's own commands taken out: the INFO of the earlier reading is
// counted by Redis after it answers, and by the hook as it returns, so
// both count it in the later reading alone, and the two cancel.
func (r meterReading) since(earlier meterReading) RedisStats {
	own := map[string]int64{}
	for k, v := range r.own {
		if d := v - earlier.own[k]; d != 0 {
			own[k] = d
		}
	}
	return r.stats.Sub(earlier.stats).without(own)
}
