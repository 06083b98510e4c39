package dedup

import (
	"context"
	"crypto/rand"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// BenchmarkFilter_AllSlicesLive is issue 12's case: SeenBatch of new URLs
// (1000 a call) with bench dedup's settings (window 168h, granules of 24h,
// capacity 1M, ε 0.001), side by side:
//
//   - set: scrapy-redis's SET, the baseline;
//   - bloom/fresh: only the current slice exists;
//   - bloom/full: the 7 older slices exist, full (random bytes: half the
//     bits set, as at capacity), every slice checked in Redis;
//   - bloom/full+cache: the same with Options.CacheBytes = DefaultCacheBytes
//     after Prepare: sealed slices checked in process, the current one
//     owned (new lines written blind).
//
// It reports checks/s, from one caller of batches of 1000 (bench dedup's
// shape) and from 16 callers of batches of 50 at once (a master admitting
// list pages of 50 links, many at a time, so that its work in Go overlaps
// Redis's).
func BenchmarkFilter_AllSlicesLive(b *testing.B) {
	for _, shape := range []struct{ callers, batch int }{{1, MaxChunk}, {16, 50}} {
		name := func(s string) string {
			return s + "/callers=" + strconv.Itoa(shape.callers) + ",batch=" + strconv.Itoa(shape.batch)
		}
		run := func(m Mode, full bool, cache int64) func(*testing.B) {
			return func(b *testing.B) { benchLive(b, m, full, cache, shape.callers, shape.batch) }
		}
		b.Run(name("set"), run(ModeSet, false, 0))
		b.Run(name("bloom/fresh"), run(ModeBloom, false, 0))
		b.Run(name("bloom/full"), run(ModeBloom, true, 0))
		b.Run(name("bloom/full+cache"), run(ModeBloom, true, DefaultCacheBytes))
	}
}

func benchLive(b *testing.B, m Mode, full bool, cache int64, callers, size int) {
	ctx := context.Background()
	rdb, ns := testenvRedis(b)
	o := Options{Mode: m, Namespace: ns + ":dedup", Window: 168 * time.Hour, Granularity: 24 * time.Hour,
		Capacity: 1_000_000, ErrorRate: 0.001, CacheBytes: cache}
	f, err := New(rdb, o)
	if err != nil {
		b.Fatal(err)
	}
	if full {
		fillOlder(b, f, rdb)
	}
	for range 8 { // a whole window, at most prepareLoadBytes a call
		if err := f.Prepare(ctx); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	b.SetParallelism((callers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			batch := testFPs("live"+strconv.FormatInt(next.Add(1), 10), size)
			if _, err := f.SeenBatch(ctx, batch); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "checks/s")
	if cache > 0 {
		info := f.CacheInfo()
		b.ReportMetric(float64(info.Sealed), "sealed")
		b.ReportMetric(float64(info.Bytes)/(1<<20), "cacheMB")
	}
}

// fillOlder fills every block of the window's older slices with random
// bytes, expiring as the filter would.
func fillOlder(b *testing.B, f *Filter, rdb *redis.Client) {
	ctx := context.Background()
	o := f.Options()
	now := rdb.Time(ctx).Val()
	sz := f.Sizing()
	buf := make([]byte, sz.BlockBytes)
	for back := 1; back < sz.Slices; back++ {
		t := now.Add(-time.Duration(back) * o.Granularity)
		for _, key := range f.SliceKeys(t) {
			_, _ = rand.Read(buf)
			expiry := t.Truncate(o.Granularity).Add(o.Granularity + o.Window)
			if err := rdb.Set(ctx, key, buf, 0).Err(); err != nil {
				b.Fatal(err)
			}
			rdb.PExpireAt(ctx, key, expiry)
		}
	}
}
