package metrics

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// BenchmarkFetch_Observe is what recording one page costs a fetcher: one
// host (the usual single-site job) and many hosts, most folded into
// "other"; serial and from all cores at once.
func BenchmarkFetch_Observe(b *testing.B) {
	hosts := make([]string, 1000)
	for i := range hosts {
		hosts[i] = "h" + strconv.Itoa(i) + ".example"
	}
	for _, bc := range []struct {
		name  string
		hosts []string
	}{{"one host", hosts[:1]}, {"1000 hosts", hosts}} {
		b.Run(bc.name, func(b *testing.B) {
			f := newRegistry(b, DefaultOptions()).Node(RoleSlave, 0).Fetch()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				f.Observe(bc.hosts[i%len(bc.hosts)], 200, 20_000, 150*time.Millisecond, nil)
				i++
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			f := newRegistry(b, DefaultOptions()).Node(RoleSlave, 0).Fetch()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					f.Observe(bc.hosts[i%len(bc.hosts)], 200, 20_000, 150*time.Millisecond, nil)
					i++
				}
			})
		})
	}
}

// BenchmarkNode_page is everything a slave records for one page: in flight
// up and down, the fetch, a politeness wait and a dupefilter call.
func BenchmarkNode_page(b *testing.B) {
	n := newRegistry(b, DefaultOptions()).Node(RoleSlave, 0)
	b.ReportAllocs()
	for b.Loop() {
		n.Fetch().InFlight(1)
		n.Politeness().Waited("example.com", 100*time.Millisecond, "rate")
		n.Fetch().Observe("example.com", 200, 20_000, 150*time.Millisecond, nil)
		n.Fetch().InFlight(-1)
		n.Dedup().Admitted("news", 1, 0)
	}
}

// BenchmarkNode_off is the same with metrics off (a nil Registry).
func BenchmarkNode_off(b *testing.B) {
	var r *Registry
	n := r.Node(RoleSlave, 0)
	b.ReportAllocs()
	for b.Loop() {
		n.Fetch().InFlight(1)
		n.Politeness().Waited("example.com", 100*time.Millisecond, "rate")
		n.Fetch().Observe("example.com", 200, 20_000, 150*time.Millisecond, nil)
		n.Fetch().InFlight(-1)
		n.Dedup().Admitted("news", 1, 0)
	}
}

// BenchmarkRedisHook is the hook's own cost per command and per pipeline
// of 100, around a next that does nothing (no Redis).
func BenchmarkRedisHook(b *testing.B) {
	h := newRegistry(b, DefaultOptions()).Node(RoleSlave, 0).RedisHook()
	ctx := context.Background()
	b.Run("command", func(b *testing.B) {
		process := h.ProcessHook(func(context.Context, redis.Cmder) error { return nil })
		cmd := redis.NewCmd(ctx, "evalsha", "0123", 1, "k")
		b.ReportAllocs()
		for b.Loop() {
			_ = process(ctx, cmd)
		}
	})
	b.Run("pipeline of 100", func(b *testing.B) {
		pipeline := h.ProcessPipelineHook(func(context.Context, []redis.Cmder) error { return nil })
		cmds := make([]redis.Cmder, 100)
		for i := range cmds {
			cmds[i] = redis.NewIntCmd(ctx, "incr", "k")
		}
		b.ReportAllocs()
		for b.Loop() {
			_ = pipeline(ctx, cmds)
		}
	})
}
