package politeness

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// server is a Redis the budget runs on: the real one and miniredis (the
// embedded Redis of crawler run), since the scripts must run on both.
type server struct {
	name    string
	connect func() redis.UniversalClient // a new client, as another process would have
	keys    cluster.Keys
}

func servers(t *testing.T) []server {
	t.Helper()
	real, keys := testenv.Redis(t)
	mr := miniredis.RunT(t)
	return []server{
		{"redis", func() redis.UniversalClient {
			c := redis.NewClient(&redis.Options{Addr: real.Options().Addr})
			t.Cleanup(func() { c.Close() })
			return c
		}, keys},
		{"miniredis", func() redis.UniversalClient {
			c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { c.Close() })
			return c
		}, cluster.Keys{Prefix: "t"}},
	}
}

func newBudget(t testing.TB, rdb redis.UniversalClient, keys cluster.Keys, tune func(*Options)) *Budget {
	t.Helper()
	opts := DefaultOptions()
	opts.Keys = keys
	if tune != nil {
		tune(&opts)
	}
	b, err := New(rdb, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

// roundTrips counts the requests a client sends to Redis: one per command
// and one per pipeline (n), and the pipelines alone (p).
type roundTrips struct{ n, p atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return next(ctx, network, addr)
	}
}

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		r.p.Add(1)
		return next(ctx, cmds)
	}
}

// flushed reports whether every answer given back for host has been told
// to Redis.
func (g *Gates) flushed(host string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	gt := g.hosts[normalize(host)]
	return gt == nil || (gt.fb == feedback{} && !gt.asking)
}

// forServers runs test on each server, with a context of a minute.
func forServers(t *testing.T, test func(t *testing.T, srv server, ctx context.Context)) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			test(t, srv, ctx)
		})
	}
}
