package dedup

import (
	"context"
	"testing"
	"time"
)

func TestOptions_Embedded(t *testing.T) {
	t.Run("job defaults: blocks of EmbeddedMaxBlockBits", func(t *testing.T) {
		o := jobDefaults(ModeBloom)
		o.Embedded = true
		if got := o.withDefaults().MaxBlockBits; got != EmbeddedMaxBlockBits {
			t.Fatalf("MaxBlockBits = %d", got)
		}
	})
	t.Run("large capacity: the smallest blocks that fit MaxSliceKeys", func(t *testing.T) {
		o := jobDefaults(ModeBloom)
		o.Embedded, o.Capacity = true, 1e9
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		got := o.withDefaults()
		if newBloomShape(got).keysPerCall() > MaxSliceKeys {
			t.Fatalf("MaxBlockBits %d: too many keys", got.MaxBlockBits)
		}
		smaller := got
		smaller.MaxBlockBits /= 2
		if got.MaxBlockBits <= EmbeddedMaxBlockBits || newBloomShape(smaller).keysPerCall() <= MaxSliceKeys {
			t.Fatalf("MaxBlockBits %d is not the smallest that fits", got.MaxBlockBits)
		}
	})
	t.Run("a MaxBlockBits given is kept", func(t *testing.T) {
		o := jobDefaults(ModeBloom)
		o.Embedded, o.MaxBlockBits = true, 1<<20
		if got := o.withDefaults().MaxBlockBits; got != 1<<20 {
			t.Fatalf("MaxBlockBits = %d", got)
		}
	})
}

// TestFilter_Embedded runs an Embedded filter on miniredis: the window
// behaves as on the cluster, blocks are created only as they are written,
// and Prepare creates nothing.
func TestFilter_Embedded(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{}
	start := testHour().Add(7 * time.Minute)
	clock.Set(start)
	f, rdb, o := newTestFilter(t, miniRedis, ModeBloom, func(o *Options) {
		o.Embedded, o.Capacity, o.Now = true, 1_000_000, clock.Now
	})
	sz := f.Sizing()
	if sz.Blocks < 10 || sz.BlockBytes*8 > int64(EmbeddedMaxBlockBits) {
		t.Fatalf("layout %+v: not split into small blocks", sz)
	}
	if err := f.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(rdb.Keys(ctx, o.Namespace+"*").Val()); n != 0 {
		t.Fatalf("Prepare created %d keys", n)
	}
	fps := testFPs("emb", 5)
	mustSeen(t, f, fps, true)
	if n := len(rdb.Keys(ctx, o.Namespace+"*").Val()); n < 1 || n > len(fps) {
		t.Fatalf("%d keys for %d fingerprints", n, len(fps))
	}
	mustSeen(t, f, fps, false)
	clock.Set(start.Add(o.Window - time.Millisecond))
	if got, err := f.Contains(ctx, fps); err != nil || countTrue(got) != len(fps) {
		t.Fatalf("forgotten inside the window: %v %v", got, err)
	}
	clock.Set(start.Add(o.Window + o.Granularity))
	mustSeen(t, f, fps, true)
}
