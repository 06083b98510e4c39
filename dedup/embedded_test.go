package dedup

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// smallLayout, when on, lays a filter out as crawler run does on its
// embedded Redis: blocks from SmallBlockBits, created on first write.
func smallLayout(o *Options, on bool) {
	if on {
		o.MinBlockBits, o.CreateOnWrite = SmallBlockBits, true
	}
}

func TestOptions_MinBlockBits(t *testing.T) {
	t.Run("job defaults: blocks of MinBlockBits", func(t *testing.T) {
		o := jobDefaults(ModeBloom)
		smallLayout(&o, true)
		if got := o.withDefaults().MaxBlockBits; got != SmallBlockBits {
			t.Fatalf("MaxBlockBits = %d", got)
		}
	})
	t.Run("large capacity: the smallest blocks that fit MaxSliceKeys", func(t *testing.T) {
		o := jobDefaults(ModeBloom)
		smallLayout(&o, true)
		o.Capacity = 1e9
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		got := o.withDefaults()
		if newBloomShape(got).keysPerCall() > MaxSliceKeys {
			t.Fatalf("MaxBlockBits %d: too many keys", got.MaxBlockBits)
		}
		smaller := got
		smaller.MaxBlockBits /= 2
		if got.MaxBlockBits <= SmallBlockBits || newBloomShape(smaller).keysPerCall() <= MaxSliceKeys {
			t.Fatalf("MaxBlockBits %d is not the smallest that fits", got.MaxBlockBits)
		}
	})
	t.Run("a MinBlockBits below one line is refused", func(t *testing.T) {
		o := jobDefaults(ModeBloom)
		o.MinBlockBits = lineBits / 2
		if err := o.Validate(); !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "MinBlockBits") {
			t.Fatalf("Validate = %v", err)
		}
	})
	t.Run("a MaxBlockBits given is kept", func(t *testing.T) {
		o := jobDefaults(ModeBloom)
		smallLayout(&o, true)
		o.MaxBlockBits = 1 << 20
		if got := o.withDefaults().MaxBlockBits; got != 1<<20 {
			t.Fatalf("MaxBlockBits = %d", got)
		}
	})
}

// TestFilter_SmallLayout runs a filter of small blocks created on write
// on miniredis, as crawler run's embedded Redis does: the window
// behaves as on the cluster, blocks are created only as they are written,
// and Prepare creates nothing.
func TestFilter_SmallLayout(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{}
	start := testHour().Add(7 * time.Minute)
	clock.Set(start)
	f, rdb, o := newTestFilter(t, miniRedis, ModeBloom, func(o *Options) {
		smallLayout(o, true)
		o.Capacity, o.Now = 1_000_000, clock.Now
	})
	sz := f.Sizing()
	if sz.Blocks < 10 || sz.BlockBytes*8 > int64(SmallBlockBits) {
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
