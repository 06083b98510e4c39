package dedup

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func benchFilter(b *testing.B, m Mode, batch int) {
	f, _, o := newTestFilterB(b, m)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		var bt Batch
		for j, fp := range testFPs("bench"+strconv.Itoa(i), batch) {
			q := ""
			if j%2 == 0 {
				q = o.Namespace + ":q"
			}
			bt.Candidates = append(bt.Candidates, Candidate{FP: fp, Queue: q, Payload: "p"})
		}
		if _, err := f.Admit(ctx, bt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "checks/s")
}

func BenchmarkFilter_Admit(b *testing.B) {
	for _, m := range allModes {
		b.Run(string(m), func(b *testing.B) { benchFilter(b, m, 500) })
	}
}

func BenchmarkFilter_SeenBatch(b *testing.B) {
	for _, m := range allModes {
		b.Run(string(m), func(b *testing.B) {
			f, _, _ := newTestFilterB(b, m)
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				if _, err := f.SeenBatch(ctx, testFPs("seen"+strconv.Itoa(i), MaxChunk)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*MaxChunk)/b.Elapsed().Seconds(), "checks/s")
		})
	}
}

func newTestFilterB(b *testing.B, m Mode) (*Filter, *redis.Client, Options) {
	rdb, ks := testenvRedis(b)
	f, err := New(rdb, Options{Mode: m, Namespace: ks + ":dedup", Window: 168 * time.Hour,
		Granularity: 24 * time.Hour, Capacity: 1_000_000, ErrorRate: 0.001})
	if err != nil {
		b.Fatal(err)
	}
	return f, rdb, f.Options()
}
