package dedup

import (
	"context"
	"runtime"
	"strconv"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// BenchmarkFilter_Embedded is crawler run's dupefilter traffic on miniredis
// (its embedded Redis) with the job file's default dedup settings: 3000
// detail links admitted 20 per list page, with the master's Prepare every
// 10 pages. It reports links/s, the heap miniredis holds after the crawl
// (liveMB) and the most the heap held at once (peakMB), for the cluster's
// layout (one 24 MB string per slice, which miniredis copies twice on every
// SETRANGE), for the small layout (MinBlockBits SmallBlockBits, CreateOnWrite), and for a slice a thousand times smaller
// (capacity 10000, one 24 KB block), the floor.
//
// Measured while choosing SmallBlockBits (links/s, liveMB; with
// Prepare creating the next slice, live memory doubles): 2^23 bits 1566,
// 2^20 4664, 2^18 5105, 2^17 2506 and 2^16 1647 with Prepare (it creates
// every block of two slices); without it 2^20 4601/27, 2^18 6627/26, 2^17
// 6327/24, 2^16 5949/18; the floor 5227/3.
func BenchmarkFilter_Embedded(b *testing.B) {
	b.Run("cluster-layout", func(b *testing.B) { benchEmbedded(b, false, 0) })
	b.Run("embedded", func(b *testing.B) { benchEmbedded(b, true, 0) })
	b.Run("capacity=10000", func(b *testing.B) { benchEmbedded(b, false, 10_000) })
}

func benchEmbedded(b *testing.B, embedded bool, capacity int64) {
	const links, perPage = 3000, 20
	ctx := context.Background()
	var peak, live uint64
	for i := 0; b.Loop(); i++ {
		mr := miniredis.NewMiniRedis()
		if err := mr.Start(); err != nil {
			b.Fatal(err)
		}
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		o := jobDefaults(ModeBloom)
		smallLayout(&o, embedded)
		if capacity != 0 {
			o.Capacity = capacity
		}
		f, err := New(rdb, o)
		if err != nil {
			b.Fatal(err)
		}
		fps := testFPs("emb"+strconv.Itoa(i), links)
		for p := 0; p*perPage < links; p++ {
			if p%10 == 0 {
				peak = max(peak, heapInUse())
				if err := f.Prepare(ctx); err != nil {
					b.Fatal(err)
				}
			}
			var bt Batch
			for _, fp := range fps[p*perPage : (p+1)*perPage] {
				bt.Candidates = append(bt.Candidates, Candidate{FP: fp, Queue: "{crawler:job:j}:q", Payload: "p"})
			}
			if _, err := f.Admit(ctx, bt); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		runtime.GC()
		live = max(live, heapInUse())
		rdb.Close()
		mr.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*links)/b.Elapsed().Seconds(), "links/s")
	b.ReportMetric(float64(live)/(1<<20), "liveMB")
	b.ReportMetric(float64(peak)/(1<<20), "peakMB")
}

func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
