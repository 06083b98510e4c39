package statuspage

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// BenchmarkRedisSource_Snapshot measures one snapshot of a busy cluster:
// 50 running jobs over the 64 slave queues, 16 live slaves, 10 proxies.
// It is what a refresh of the page costs Redis, at most once per
// Options.CacheFor however many pages are open.
func BenchmarkRedisSource_Snapshot(b *testing.B) {
	f := newFixture(b)
	for i := range 16 {
		f.register(i, fmt.Sprintf("crawl-%02d.internal", i), 32)
	}
	for j := range 50 {
		name := fmt.Sprintf("job-%02d", j)
		f.submit(name)
		for s := range 16 {
			f.crawl(name, step{slave: s, routed: 100, dups: 20, stored: 60, failed: 2, lps: 3})
			f.queue(name, s, 5, 2)
		}
	}
	urls := make([]string, 10)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://127.0.0.%d:3128", i+1)
	}
	f.seedProxies(urls...)
	src := f.source(nil)
	var cmds commandCount
	f.rdb.AddHook(&cmds)
	b.ResetTimer()
	for b.Loop() {
		snap, err := src.Snapshot(f.ctx)
		if err != nil || len(snap.Jobs) != 50 || len(snap.Slaves) != 16 {
			b.Fatalf("snapshot: %v", err)
		}
	}
	b.ReportMetric(float64(cmds.trips.Load())/float64(b.N), "round-trips/op")
	b.ReportMetric(float64(cmds.cmds.Load())/float64(b.N), "commands/op")
}

// commandCount counts the round trips and commands a client sends.
type commandCount struct{ trips, cmds atomic.Int64 }

func (c *commandCount) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commandCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.trips.Add(1)
		c.cmds.Add(1)
		return next(ctx, cmd)
	}
}

func (c *commandCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.trips.Add(1)
		c.cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}
