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
// stay within 1.2x the configured total ε, and near the rate the sizing
// expects (each slice fills its allocator size class, so it is lower).
func TestFilter_FalsePositiveRate(t *testing.T) {
	const capacity, absent, eps = 100_000, 1_000_000, 0.01
	ctx := context.Background()
	clock := &fakeClock{}
	now := time.Now().Truncate(time.Hour)
	f, _, o := newTestFilter(t, realRedis, ModeBloom, func(o *Options) {
		o.Window, o.Granularity, o.Capacity, o.ErrorRate, o.Now = 2*time.Hour, time.Hour, capacity, eps, clock.Now
	})
	slices := int(o.Window/o.Granularity) + 1
	for s := range slices {
		clock.Set(now.Add(time.Duration(s-slices+1) * o.Granularity))
		fillSlice(t, f, "slice"+strconv.Itoa(s), capacity)
	}
	clock.Set(now.Add(time.Minute))
	positives := 0
	for start := 0; start < absent; start += MaxChunk {
		got, err := f.Contains(ctx, testFPs("absent"+strconv.Itoa(start), MaxChunk))
		if err != nil {
			t.Fatal(err)
		}
		positives += countTrue(got)
	}
	rate := float64(positives) / absent
	sz := f.Sizing()
	expected := 1 - math.Pow(1-sz.ExpectedSliceErrorRate, float64(slices))
	t.Logf("%d slices of %d: false-positive rate %.5f (configured total ε %.3f, expected %.5f; slice ε %.5f, expected %.5f)",
		slices, capacity, rate, eps, expected, eps/float64(slices), sz.ExpectedSliceErrorRate)
	if rate > 1.2*eps {
		t.Fatalf("false-positive rate %.5f above 1.2 × ε = %.4f", rate, 1.2*eps)
	}
	if rate > 1.2*expected || rate < 0.5*expected {
		t.Fatalf("false-positive rate %.5f far from the expected %.5f: are all slices read?", rate, expected)
	}
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
