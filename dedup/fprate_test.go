package dedup

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"
)

// TestFilter_FalsePositiveRate fills every live slice to capacity (a fake
// clock puts each third of the inserts in its own granule) and then asks
// about 1M fingerprints never inserted: the share reported present must
// stay within the configured total ε, and near the rate the sizing
// expects (each slice fills its allocator size class, so it is lower). A
// filter with a cache (Options.CacheBytes), answering from its copies of
// the slices, must report exactly as many.
//
// The small layout crawler run picks for its embedded Redis is checked the same way, on the real
// Redis for speed: it must answer as the cluster's does.
func TestFilter_FalsePositiveRate(t *testing.T) {
	for _, embedded := range []bool{false, true} {
		name := map[bool]string{false: "cluster layout", true: "embedded layout"}[embedded]
		t.Run(name, func(t *testing.T) { testFalsePositiveRate(t, embedded) })
	}
}

func testFalsePositiveRate(t *testing.T, embedded bool) {
	const capacity, absent, eps = 100_000, 1_000_000, 0.01
	ctx := context.Background()
	clock := &fakeClock{}
	now := testHour()
	f, _, o := newTestFilter(t, realRedis, ModeBloom, func(o *Options) {
		o.Window, o.Granularity, o.Capacity, o.ErrorRate, o.Now = 2*time.Hour, time.Hour, capacity, eps, clock.Now
		smallLayout(o, embedded)
	})
	if sz := f.Sizing(); embedded && sz.Blocks < 4 {
		t.Fatalf("embedded layout in %d blocks", sz.Blocks)
	}
	slices := int(o.Window/o.Granularity) + 1
	for s := range slices {
		clock.Set(now.Add(time.Duration(s-slices+1) * o.Granularity))
		fillSlice(t, f, "slice"+strconv.Itoa(s), capacity)
	}
	clock.Set(now.Add(time.Minute))
	positives := countPositives(t, f, absent)
	rate := float64(positives) / absent
	sz := f.Sizing()
	expected := 1 - math.Pow(1-sz.ExpectedSliceErrorRate, float64(slices))
	t.Logf("%d slices of %d in %d blocks: false-positive rate %.5f (configured total ε %.3f, expected %.5f; slice ε %.5f, expected %.5f)",
		slices, capacity, sz.Blocks, rate, eps, expected, eps/float64(slices), sz.ExpectedSliceErrorRate)
	if rate > eps {
		t.Fatalf("false-positive rate %.5f above the configured ε = %.4f", rate, eps)
	}
	if rate > 1.2*expected || rate < 0.5*expected {
		t.Fatalf("false-positive rate %.5f far from the expected %.5f: are all slices read?", rate, expected)
	}
	o.CacheBytes = 64 << 20
	cached, err := New(f.rdb, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := cached.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	if got := countPositives(t, cached, absent); got != positives || cached.CacheInfo().Answered == 0 {
		t.Fatalf("with a cache (%+v): %d false positives, without %d", cached.CacheInfo(), got, positives)
	}
}

// countPositives asks f about n fingerprints never inserted and returns
// how many it reports present.
func countPositives(t *testing.T, f *Filter, n int) int {
	t.Helper()
	positives := 0
	for start := 0; start < n; start += MaxChunk {
		got, err := f.Contains(context.Background(), testFPs("absent"+strconv.Itoa(start), MaxChunk))
		if err != nil {
			t.Fatal(err)
		}
		positives += countTrue(got)
	}
	return positives
}

// fillSlice inserts fingerprints until exactly n were new in the current
// slice (a few are rejected as false positives of the older slices).
func fillSlice(t *testing.T, f *Filter, tag string, n int) {
	t.Helper()
	added := 0
	for batch := 0; added < n; batch++ {
		fps := testFPs(tag+"-"+strconv.Itoa(batch), min(MaxChunk, n-added))
		got, err := f.SeenBatch(context.Background(), fps)
		if err != nil {
			t.Fatal(err)
		}
		added += countTrue(got)
	}
}
