package metrics

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// pipelineCommand is the command label of a pipeline's or transaction's
// round trip in crawler_redis_roundtrip_seconds.
const pipelineCommand = "pipeline"

// RedisHook is a go-redis hook (redis.Hook) that records a node's Redis
// traffic: each round trip's latency, by command name for a lone command
// and as "pipeline" for a pipeline or MULTI/EXEC, every command sent and
// every command failed by name (a script call counts as evalsha or eval,
// never by its keys or arguments), and connections opened. Add it with
// rdb.AddHook(node.RedisHook()). A nil *RedisHook passes everything through
// and records nothing.
type RedisHook struct {
	commands *bounded[*redisCommand]
	pipeline prometheus.Observer
	dialOK   prometheus.Counter
	dialErr  prometheus.Counter
}

var _ redis.Hook = (*RedisHook)(nil)

// redisCommand are one command label's series.
type redisCommand struct {
	sent, failed prometheus.Counter
	roundTrip    prometheus.Observer
}

func newRedisHook(r *Registry, labels prometheus.Labels) *RedisHook {
	sent := r.f.redisCommands.MustCurryWith(labels)
	failed := r.f.redisErrors.MustCurryWith(labels)
	rtt := r.f.redisRoundTrip.MustCurryWith(labels)
	dials := r.f.redisDials.MustCurryWith(labels)
	return &RedisHook{
		commands: newBounded(r.command, func(name string) *redisCommand {
			return &redisCommand{sent: sent.WithLabelValues(name), failed: failed.WithLabelValues(name),
				roundTrip: rtt.WithLabelValues(name)}
		}),
		pipeline: rtt.WithLabelValues(pipelineCommand),
		dialOK:   dials.WithLabelValues("ok"),
		dialErr:  dials.WithLabelValues("error"),
	}
}

// DialHook counts connections opened, by result.
func (h *RedisHook) DialHook(next redis.DialHook) redis.DialHook {
	if h == nil {
		return next
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			h.dialErr.Inc()
		} else {
			h.dialOK.Inc()
		}
		return conn, err
	}
}

// ProcessHook times a lone command and counts it.
func (h *RedisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	if h == nil {
		return next
	}
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		c := h.command(cmd)
		c.roundTrip.Observe(time.Since(start).Seconds())
		c.sent.Inc()
		if failed(err) {
			c.failed.Inc()
		}
		return err
	}
}

// ProcessPipelineHook times a pipeline's round trip and counts each of its
// commands (go-redis's own, such as a new connection's CLIENT SETINFO,
// included).
func (h *RedisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	if h == nil {
		return next
	}
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		h.pipeline.Observe(time.Since(start).Seconds())
		for _, cmd := range cmds {
			c := h.command(cmd)
			c.sent.Inc()
			if failed(cmd.Err()) {
				c.failed.Inc()
			}
		}
		return err
	}
}

// command returns the series of cmd's name; past 64 names, "other".
func (h *RedisHook) command(cmd redis.Cmder) *redisCommand {
	return h.commands.get(cmd.Name())
}

// failed reports a command's error that is a failure: a nil reply is not.
func failed(err error) bool {
	return err != nil && !errors.Is(err, redis.Nil)
}
