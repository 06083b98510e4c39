package dedup

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestBloomShape(t *testing.T) {
	o := Options{Window: 168 * time.Hour, Granularity: 24 * time.Hour, Capacity: 1_000_000, ErrorRate: 0.008}.withDefaults()
	s := newBloomShape(o)
	t.Run("error rate split over L+1 slices", func(t *testing.T) {
		if s.lookback != 7 || math.Abs(s.sliceErr-0.001) > 1e-12 {
			t.Fatalf("L = %d, slice ε = %v", s.lookback, s.sliceErr)
		}
	})
	t.Run("optimal bits and hashes", func(t *testing.T) {
		if perElem := float64(s.bits) / 1e6; math.Abs(perElem-14.38) > 0.01 || s.k != 10 {
			t.Fatalf("%.2f bits per element, k = %d", perElem, s.k)
		}
		if got := ExpectedErrorRate(s.bits, 1_000_000, s.k); got > 1.05*s.sliceErr {
			t.Fatalf("expected rate %v above slice ε %v", got, s.sliceErr)
		}
	})
	t.Run("one block below the cap, split above", func(t *testing.T) {
		if s.blocks != 1 {
			t.Fatalf("%d blocks", s.blocks)
		}
		o.MaxBlockBits = 1 << 20
		split := newBloomShape(o)
		if split.blocks != int((s.bits+(1<<20)-1)>>20) || split.blockBits > 1<<20 || uint64(split.blocks)*split.blockBits < s.bits {
			t.Fatalf("split %+v", split)
		}
	})
	t.Run("positions in range and spread over blocks", func(t *testing.T) {
		o.MaxBlockBits = 1 << 20
		split := newBloomShape(o)
		seen := map[uint32]bool{}
		for _, fp := range testFPs("pos", 2000) {
			p := split.appendPositions(nil, fp)
			seen[be32(p)] = true
			for i := 4; i < len(p); i += 4 {
				if uint64(be32(p[i:])) >= split.blockBits {
					t.Fatalf("bit %d beyond block of %d", be32(p[i:]), split.blockBits)
				}
			}
		}
		if len(seen) != split.blocks {
			t.Fatalf("%d of %d blocks used", len(seen), split.blocks)
		}
	})
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// TestFilter_Expiry lets real time pass (the server's clock): window 2s,
// granules of 1s.
func TestFilter_Expiry(t *testing.T) {
	ctx := context.Background()
	f, rdb, o := newTestFilter(t, realRedis, ModeBloom, func(o *Options) {
		o.Window, o.Granularity, o.Capacity = 2*time.Second, time.Second, 1000
	})
	fps := testFPs("exp", 10)
	start := serverTime(t, rdb)
	mustSeen(t, f, fps, true)
	g := start.UnixMilli() / 1000
	slice := keys{ns: o.Namespace}.slice(g, 0)
	t.Run("slice key expires with the window", func(t *testing.T) {
		ttl := rdb.PExpireTime(ctx, slice).Val()
		if want := time.Duration((g+1)*1000+2000) * time.Millisecond; ttl != want {
			t.Fatalf("slice %s expires at %v, want %v", slice, ttl, want)
		}
	})
	t.Run("rejected inside the window", func(t *testing.T) {
		waitUntil(t, rdb, start.Add(1500*time.Millisecond))
		mustSeen(t, f, fps, false)
	})
	t.Run("new after window plus one granule", func(t *testing.T) {
		waitUntil(t, rdb, time.UnixMilli((g+3)*1000+50))
		if n := rdb.Exists(ctx, slice).Val(); n != 0 {
			t.Fatalf("expired slice %s still exists", slice)
		}
		mustSeen(t, f, fps, true)
	})
}

func serverTime(t *testing.T, rdb *redis.Client) time.Time {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// waitUntil sleeps until the Redis server's clock reaches at: time itself is
// under test here.
func waitUntil(t *testing.T, rdb *redis.Client, at time.Time) {
	t.Helper()
	for now := serverTime(t, rdb); now.Before(at); now = serverTime(t, rdb) {
		time.Sleep(min(at.Sub(now), 100*time.Millisecond))
	}
}

func TestFilter_BlockSplit(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		clock := &fakeClock{}
		clock.Set(time.Now())
		f, rdb, o := newTestFilter(t, be, ModeBloom, func(o *Options) { o.MaxBlockBits, o.Now = 4096, clock.Now })
		shape := newBloomShape(o)
		if shape.blocks < 4 {
			t.Fatalf("want a split slice, got %d blocks", shape.blocks)
		}
		fps := testFPs("split", 5000)
		mustSeen(t, f, fps, true)
		g := shape.granule(clock.Now().UnixMilli())
		t.Run("one key per block at full size", func(t *testing.T) {
			for b := range shape.blocks {
				key := keys{ns: o.Namespace}.slice(g, b)
				if n := rdb.StrLen(ctx, key).Val(); uint64(n) != (shape.blockBits+7)/8 {
					t.Fatalf("block %s: %d bytes, want %d", key, n, (shape.blockBits+7)/8)
				}
			}
		})
		t.Run("membership", func(t *testing.T) {
			got, err := f.Contains(ctx, fps)
			if err != nil || countTrue(got) != len(fps) {
				t.Fatalf("%d of %d present, %v", countTrue(got), len(fps), err)
			}
			absent, err := f.Contains(ctx, testFPs("nope", 5000))
			if err != nil || countTrue(absent) > 25 {
				t.Fatalf("%d of 5000 absent reported present, %v", countTrue(absent), err)
			}
		})
	})
}

func TestFilter_Prepare(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		clock := &fakeClock{}
		clock.Set(time.Now())
		f, rdb, o := newTestFilter(t, be, ModeBloom, func(o *Options) { o.Now = clock.Now })
		if err := f.Prepare(ctx); err != nil {
			t.Fatal(err)
		}
		shape := newBloomShape(o)
		g := shape.granule(clock.Now().UnixMilli())
		for _, gg := range []int64{g, g + 1} {
			key := keys{ns: o.Namespace}.slice(gg, 0)
			if n := rdb.StrLen(ctx, key).Val(); uint64(n) != (shape.blockBits+7)/8 {
				t.Fatalf("%s: %d bytes", key, n)
			}
			// miniredis keeps a TTL, not a deadline, so its answer drifts
			// by the milliseconds the test took.
			want := time.Duration((gg+1)*shape.gran+shape.window) * time.Millisecond
			if at := rdb.PExpireTime(ctx, key).Val(); (at - want).Abs() > time.Second {
				t.Fatalf("%s expires at %v, want %v", key, at, want)
			}
		}
	})
}

func TestFilter_Sweep(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		clock := &fakeClock{}
		start := time.Now()
		clock.Set(start)
		f, rdb, o := newTestFilter(t, be, ModeExact, func(o *Options) { o.Now = clock.Now })
		mustSeen(t, f, testFPs("old", 30), true)
		clock.Set(start.Add(o.Window / 2))
		mustSeen(t, f, testFPs("mid", 20), true)
		clock.Set(start.Add(o.Window))
		t.Run("removes exactly the expired", func(t *testing.T) {
			n, err := f.Sweep(ctx)
			if err != nil || n != 30 {
				t.Fatalf("swept %d, %v; want 30", n, err)
			}
			if left := rdb.ZCard(ctx, keys{ns: o.Namespace}.exact()).Val(); left != 20 {
				t.Fatalf("%d left", left)
			}
		})
		t.Run("inserts sweep as much as they add", func(t *testing.T) {
			clock.Set(start.Add(2 * o.Window))
			mustSeen(t, f, testFPs("new", 20), true)
			if left := rdb.ZCard(ctx, keys{ns: o.Namespace}.exact()).Val(); left != 20 {
				t.Fatalf("%d left, want the 20 new", left)
			}
		})
		t.Run("members are raw 16 bytes", func(t *testing.T) {
			m := rdb.ZRange(ctx, keys{ns: o.Namespace}.exact(), 0, 0).Val()
			if len(m) != 1 || len(m[0]) != exactMember {
				t.Fatalf("member %q", m)
			}
		})
	})
}
