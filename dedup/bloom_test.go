package dedup

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestBloomShape_remembered: a remembered shape is the one sizing gives,
// for each of the options it depends on, and options that differ in any
// of them are not answered from another's entry.
func TestBloomShape_remembered(t *testing.T) {
	base := Options{Window: 168 * time.Hour, Granularity: 24 * time.Hour, Capacity: 1_000_000, ErrorRate: 0.008}.withDefaults()
	variants := map[string]func(*Options){
		"base":        func(*Options) {},
		"window":      func(o *Options) { o.Window = 336 * time.Hour },
		"granularity": func(o *Options) { o.Granularity = 12 * time.Hour },
		"capacity":    func(o *Options) { o.Capacity = 3_000_000 },
		"error rate":  func(o *Options) { o.ErrorRate = 0.0001 },
		"block cap":   func(o *Options) { o.MaxBlockBits = 1 << 20 },
	}
	seen := map[bloomShape]string{}
	for name, change := range variants {
		o := base
		change(&o)
		want := sizeBloom(o)
		for range 2 { // the first call sizes and remembers, the second recalls
			if got := newBloomShape(o); got != want {
				t.Errorf("%s: newBloomShape = %+v, sizing gives %+v", name, got, want)
			}
		}
		if other, dup := seen[want]; dup {
			t.Errorf("%s and %s size alike; the test cannot tell their entries apart", name, other)
		}
		seen[want] = name
	}
}

func TestBloomShape(t *testing.T) {
	o := Options{Window: 168 * time.Hour, Granularity: 24 * time.Hour, Capacity: 1_000_000, ErrorRate: 0.008}.withDefaults()
	s := newBloomShape(o)
	t.Run("error rate split over L+1 slices", func(t *testing.T) {
		if s.lookback != 7 || math.Abs(s.sliceErr-0.001) > 1e-12 {
			t.Fatalf("L = %d, slice ε = %v", s.lookback, s.sliceErr)
		}
	})
	t.Run("blocked rate at capacity within the slice ε", func(t *testing.T) {
		got := BlockedErrorRate(s.bits(), o.Capacity, s.k, lineBits)
		if got > s.sliceErr || s.k < 8 || s.k > 12 {
			t.Fatalf("rate %v (slice ε %v), k = %d", got, s.sliceErr, s.k)
		}
		if fewer := s.bits() - lineBits; BlockedErrorRate(fewer, o.Capacity, s.k, lineBits) <= got {
			t.Fatal("rate does not fall with more bits")
		}
	})
	t.Run("block fills its allocator size class", func(t *testing.T) {
		b := s.blockBytes()
		class := allocClass(b + sdsOverhead(b))
		if b+sdsOverhead(b) > class || b+lineBytes+sdsOverhead(b+lineBytes) <= class {
			t.Fatalf("block of %d bytes in class %d", b, class)
		}
		if minimal := linesFor(o.Capacity, s.sliceErr); s.blockLines < minimal {
			t.Fatalf("%d lines, fewer than the %d needed", s.blockLines, minimal)
		}
	})
	t.Run("one block below the cap, split above", func(t *testing.T) {
		if s.blocks != 1 {
			t.Fatalf("%d blocks", s.blocks)
		}
		o := o
		o.MaxBlockBits = 1 << 20
		split := newBloomShape(o)
		if split.blocks < 2 || split.blockBytes()*8 > 1<<20 || split.bits() < linesFor(o.Capacity, s.sliceErr)*lineBits {
			t.Fatalf("split %+v", split)
		}
	})
	t.Run("positions in range, distinct and spread over blocks", func(t *testing.T) {
		o := o
		o.MaxBlockBits = 1 << 20
		split := newBloomShape(o)
		blocks := map[int]bool{}
		for _, fp := range testFPs("pos", 2000) {
			p, bits := split.locate(nil, fp)
			blocks[p.block] = true
			if p.from%lineBytes != 0 || p.to != p.from+lineBytes-1 || p.to >= split.blockBytes() {
				t.Fatalf("line %d..%d in a block of %d bytes", p.from, p.to, split.blockBytes())
			}
			if len(bits) != 2*split.k {
				t.Fatalf("%d bytes of bits for k = %d", len(bits), split.k)
			}
			seen := map[[2]byte]bool{}
			for i := 0; i < len(bits); i += 2 {
				pair := [2]byte{bits[i], bits[i+1]}
				if seen[pair] || bits[i+1] == 0 || bits[i+1]&(bits[i+1]-1) != 0 {
					t.Fatalf("bit pair %v repeated or not one bit", pair)
				}
				seen[pair] = true
			}
		}
		if len(blocks) != split.blocks {
			t.Fatalf("%d of %d blocks used", len(blocks), split.blocks)
		}
	})
}

func TestAllocClass(t *testing.T) {
	for _, tt := range []struct{ n, want uint64 }{
		{1, 16}, {100, 112}, {129, 160}, {256, 256}, {257, 320},
		{16385, 20480}, {2338000, 2621440}, {1 << 29, 1 << 29},
	} {
		if got := allocClass(tt.n); got != tt.want {
			t.Errorf("allocClass(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

// TestFilter_Expiry lets real time pass (the server's clock): window 2s,
// granules of 1s.
func TestFilter_Expiry(t *testing.T) {
	ctx := context.Background()
	f, rdb, o := newTestFilter(t, realRedis, ModeBloom, func(o *Options) {
		o.Window, o.Granularity, o.Capacity = 2*time.Second, time.Second, 1000
	})
	fps := testFPs("exp", 10)
	start := testenv.ServerTime(t, rdb)
	mustSeen(t, f, fps, true)
	g := start.UnixMilli() / 1000
	slice := bloomKeys(o).slice(g, 0)
	t.Run("slice key expires with the window", func(t *testing.T) {
		ttl := rdb.PExpireTime(ctx, slice).Val()
		if want := time.Duration((g+1)*1000+2000) * time.Millisecond; ttl != want {
			t.Fatalf("slice %s expires at %v, want %v", slice, ttl, want)
		}
	})
	t.Run("rejected inside the window", func(t *testing.T) {
		testenv.WaitServerTime(t, rdb, start.Add(1500*time.Millisecond))
		mustSeen(t, f, fps, false)
	})
	t.Run("new after window plus one granule", func(t *testing.T) {
		testenv.WaitServerTime(t, rdb, time.UnixMilli((g+3)*1000+50))
		if n := rdb.Exists(ctx, slice).Val(); n != 0 {
			t.Fatalf("expired slice %s still exists", slice)
		}
		mustSeen(t, f, fps, true)
	})
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
				key := bloomKeys(o).slice(g, b)
				if n := rdb.StrLen(ctx, key).Val(); uint64(n) != shape.blockBytes() {
					t.Fatalf("block %s: %d bytes, want %d", key, n, shape.blockBytes())
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
		begin := time.Now()
		clock.Set(begin)
		f, rdb, o := newTestFilter(t, be, ModeBloom, func(o *Options) { o.Now = clock.Now })
		if err := f.Prepare(ctx); err != nil {
			t.Fatal(err)
		}
		shape := newBloomShape(o)
		g := shape.granule(clock.Now().UnixMilli())
		for _, gg := range []int64{g, g + 1} {
			key := bloomKeys(o).slice(gg, 0)
			if n := rdb.StrLen(ctx, key).Val(); uint64(n) != shape.blockBytes() {
				t.Fatalf("%s: %d bytes", key, n)
			}
			// miniredis keeps a TTL, not a deadline, so its answer drifts
			// by as long as the test has taken since its clock was set (long
			// on a loaded machine under -race).
			want := time.Duration((gg+1)*shape.gran+shape.window) * time.Millisecond
			if at := rdb.PExpireTime(ctx, key).Val(); (at - want).Abs() > time.Since(begin)+time.Second {
				t.Fatalf("%s expires at %v, want %v", key, at, want)
			}
		}
	})
}

// TestFilter_exactSweep: an exact-mode insert removes as many expired
// entries as it adds, so the set stays level under steady traffic with no
// periodic sweep.
func TestFilter_exactSweep(t *testing.T) {
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
		t.Run("inserts sweep as much as they add", func(t *testing.T) {
			mustSeen(t, f, testFPs("new", 20), true)
			if left := rdb.ZCard(ctx, keys{ns: o.Namespace}.exact()).Val(); left != 50 {
				t.Fatalf("%d left, want 50: 20 of the 30 expired swept, 20 new", left)
			}
			mustSeen(t, f, testFPs("newer", 20), true)
			if left := rdb.ZCard(ctx, keys{ns: o.Namespace}.exact()).Val(); left != 60 {
				t.Fatalf("%d left, want 60: the last 10 expired swept, 20 new", left)
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

// TestFilter_ClockSkew: a script that finds the server's clock outside the
// granules it was given fails with the DEDUPCLOCK code, which comes back
// as ErrClockSkew; the filter then reads the clock again and succeeds.
func TestFilter_ClockSkew(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		f, _, _ := newTestFilter(t, be, ModeBloom, nil)
		fps := testFPs("skew", 3)
		t.Run("translated", func(t *testing.T) {
			day := int64(24 * time.Hour / time.Millisecond)
			b := f.batch(fps, true)
			_, _, err := f.run(context.Background(), f.scripts.seen, func(_, guess int64) plan {
				return f.mode.plan(b, -1, guess+10*day)
			})
			if !errors.Is(err, ErrClockSkew) || !strings.Contains(err.Error(), "outside the keys passed") {
				t.Fatalf("err = %v, want ErrClockSkew with its detail", err)
			}
		})
		t.Run("resynced", func(t *testing.T) {
			f.skew.Store(int64(10 * 24 * time.Hour / time.Millisecond))
			mustSeen(t, f, fps, true)
			if s := time.Duration(f.skew.Load()) * time.Millisecond; s.Abs() > time.Minute {
				t.Fatalf("skew still %v", s)
			}
		})
	})
}
