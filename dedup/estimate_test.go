package dedup

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// jobDefaults are the job file's default dedup settings.
func jobDefaults(m Mode) Options {
	return Options{Mode: m, Namespace: "{crawler:job:j}:dedup", Window: 168 * time.Hour,
		Granularity: 24 * time.Hour, Capacity: 10_000_000, ErrorRate: 0.001}
}

func TestEstimateBytes(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct {
		name     string
		o        Options
		min, max uint64
	}{
		// 9 slices (7 back, the current, the next) of ~20 bits per URL
		// (ε/8 per slice, each string grown to its allocator class).
		{"bloom defaults", jobDefaults(ModeBloom), 9 * 23 * mib, 9 * 25 * mib},
		{"bloom capacity 1e9", func() Options { o := jobDefaults(ModeBloom); o.Capacity = 1e9; return o }(), 9 * 2300 * mib, 9 * 2600 * mib},
		{"exact defaults", jobDefaults(ModeExact), 8 * 1e7 * exactEntryBytes, 8 * 1e7 * exactEntryBytes},
		{"set defaults: one window", jobDefaults(ModeSet), 8*1e7*setEntryBytes + keyBytes, 8*1e7*setEntryBytes + keyBytes},
		{"set without window", Options{Mode: ModeSet, Namespace: "ns", Capacity: 1000}, 1000*setEntryBytes + keyBytes, 1000*setEntryBytes + keyBytes},
		{"invalid: capacity 1e15", func() Options { o := jobDefaults(ModeBloom); o.Capacity = 1e15; return o }(), 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateBytes(tt.o); got < tt.min || got > tt.max {
				t.Fatalf("EstimateBytes = %d (%s), want %d..%d", got, formatBytes(got), tt.min, tt.max)
			}
		})
	}
	t.Run("bloom is every live slice at its allocated size", func(t *testing.T) {
		o := jobDefaults(ModeBloom)
		o.MaxBlockBits = 1 << 20
		s := newBloomShape(o.withDefaults())
		want := uint64(9*s.blocks) * (allocClass(s.blockBytes()+sdsOverhead(s.blockBytes())) + keyBytes)
		if got := EstimateBytes(o); got != want {
			t.Fatalf("EstimateBytes = %d, want %d", got, want)
		}
	})
}

// TestEstimateBytes_Redis fills a filter's whole window on the real Redis
// and compares what its keys take (MEMORY USAGE, per key, so other tests on
// the same server do not count) with the estimate: never above it, and
// close to it.
func TestEstimateBytes_Redis(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		mode   Mode
		lowest float64 // the least share of the estimate the keys must take
	}{{ModeBloom, 0.95}, {ModeExact, 0.5}} {
		t.Run(string(tt.mode), func(t *testing.T) {
			clock := &fakeClock{}
			start := testHour()
			clock.Set(start)
			f, rdb, o := newTestFilter(t, realRedis, tt.mode, func(o *Options) {
				o.Window, o.Granularity, o.Capacity, o.Now = 2*time.Hour, time.Hour, 5000, clock.Now
			})
			for g := range 3 { // granules g0, g0+1, g0+2: the window and the current one
				clock.Set(start.Add(time.Duration(g) * time.Hour))
				fillSlice(t, f, "est"+string(rune('a'+g)), int(o.Capacity))
				if err := f.Prepare(ctx); err != nil {
					t.Fatal(err)
				}
			}
			var used uint64
			for _, key := range rdb.Keys(ctx, o.Namespace+":*").Val() {
				used += uint64(rdb.MemoryUsage(ctx, key, 0).Val())
			}
			est := EstimateBytes(o)
			t.Logf("%s: keys take %d bytes, estimate %d (%.2f)", tt.mode, used, est, float64(used)/float64(est))
			if used > est || float64(used) < tt.lowest*float64(est) {
				t.Fatalf("keys take %d bytes, estimate %d: want %.2f..1 of it", used, est, tt.lowest)
			}
		})
	}
}

func TestParseRedisMemory(t *testing.T) {
	info := "# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\n" +
		"total_system_memory:8589934592\r\nmaxmemory:0\r\nmaxmemory_policy:noeviction\r\n"
	got, err := ParseRedisMemory(info)
	if err != nil || got != (RedisMemory{Used: 1 << 20, TotalSystem: 8 << 30}) {
		t.Fatalf("ParseRedisMemory = %+v, %v", got, err)
	}
	if got, err := ParseRedisMemory("# Clients\r\nconnected_clients:1\r\n"); err != nil || got != (RedisMemory{}) {
		t.Fatalf("no memory section: %+v, %v", got, err)
	}
	if _, err := ParseRedisMemory("used_memory:lots\r\n"); err == nil {
		t.Fatal("malformed number accepted")
	}
}

func TestRedisMemory_CheckRoom(t *testing.T) {
	const gib = 1 << 30
	for _, tt := range []struct {
		name string
		m    RedisMemory
		need uint64
		ok   bool
		says string // in the error
	}{
		{"fits under maxmemory", RedisMemory{Used: 1 * gib, MaxMemory: 4 * gib, TotalSystem: 64 * gib}, 3 * gib, true, ""},
		{"above maxmemory though the host has room", RedisMemory{Used: 1 * gib, MaxMemory: 4 * gib, TotalSystem: 64 * gib}, 3*gib + 1, false, "3.0 GiB free (1.0 GiB used, maxmemory 4.0 GiB)"},
		{"no maxmemory: the host's memory", RedisMemory{Used: 2 * gib, TotalSystem: 8 * gib}, 7 * gib, false, "needs up to 7.0 GiB, Redis has 6.0 GiB free (2.0 GiB used, no maxmemory, 8.0 GiB of system memory)"},
		{"no maxmemory, fits the host", RedisMemory{Used: 2 * gib, TotalSystem: 8 * gib}, 6 * gib, true, ""},
		{"used above maxmemory", RedisMemory{Used: 5 * gib, MaxMemory: 4 * gib}, 1, false, "0 B free"},
		{"nothing known (miniredis)", RedisMemory{}, 1 << 50, true, ""},
		{"nothing needed", RedisMemory{Used: 4 * gib, MaxMemory: 4 * gib}, 0, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.m.CheckRoom(tt.need)
			if tt.ok != (err == nil) || !tt.ok && (!errors.Is(err, ErrNoRoom) || !strings.Contains(err.Error(), tt.says)) {
				t.Fatalf("CheckRoom(%d) = %v, want ok %v saying %q", tt.need, err, tt.ok, tt.says)
			}
		})
	}
	t.Run("the default job against a 128 MiB Redis", func(t *testing.T) {
		err := RedisMemory{Used: 1 << 20, MaxMemory: 128 << 20}.CheckRoom(EstimateBytes(jobDefaults(ModeBloom)))
		if !errors.Is(err, ErrNoRoom) || !strings.Contains(err.Error(), "needs up to 216.0 MiB") {
			t.Fatalf("CheckRoom = %v", err)
		}
	})
}
