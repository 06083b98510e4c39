package dedup

import (
	"context"
	"crypto/sha1"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// backend is a Redis server the scripts run on: the real one, and miniredis,
// the embedded Redis of crawler run and crawler demo, whose Lua has no
// struct or bit library and which has no BITFIELD.
type backend struct {
	name string
	open func(testing.TB) (*redis.Client, cluster.Keys)
}

var (
	realRedis = backend{"redis", testenv.Redis}
	miniRedis = backend{"miniredis", openMiniredis}
	backends  = []backend{realRedis, miniRedis}
)

// openMiniredis starts an in-process miniredis for this test. It never
// expires keys by real time, so expiry tests stay on the real Redis.
func openMiniredis(tb testing.TB) (*redis.Client, cluster.Keys) {
	mr := miniredis.RunT(tb)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	tb.Cleanup(func() { rdb.Close() })
	return rdb, cluster.Keys{Prefix: testenv.UniquePrefix(tb)}
}

// onBackends runs fn as a subtest on every backend, with the same
// assertions on each.
func onBackends(t *testing.T, fn func(t *testing.T, be backend)) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { fn(t, be) })
	}
}

// testFPs returns n distinct fingerprints derived from tag.
func testFPs(tag string, n int) []canon.Fingerprint {
	out := make([]canon.Fingerprint, n)
	for i := range out {
		out[i] = sha1.Sum([]byte(tag + "/" + strconv.Itoa(i)))
	}
	return out
}

// testHour is the start of the hour after next: a fake clock set from it
// names only slices whose keys, which Redis expires by its real clock,
// outlive any test. (A fake clock in the current hour once lost a test
// its oldest slice midway, when the real hour turned during the run.)
func testHour() time.Time { return time.Now().Truncate(time.Hour).Add(2 * time.Hour) }

// fakeClock is a settable Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

var allModes = []Mode{ModeBloom, ModeExact, ModeSet}

// variant is a filter configuration the common tests run on: every mode,
// and bloom with a cache whose current slice is claimed before use.
type variant struct {
	name  string
	mode  Mode
	cache bool
}

var variants = []variant{{"bloom", ModeBloom, false}, {"bloom-cached", ModeBloom, true},
	{"exact", ModeExact, false}, {"set", ModeSet, false}}

// newVariantFilter is newTestFilter for variant v; a cached filter is
// prepared, so that it holds the current slice as its writer.
func newVariantFilter(t *testing.T, be backend, v variant, edit func(*Options)) (*Filter, *redis.Client, Options) {
	t.Helper()
	f, rdb, o := newTestFilter(t, be, v.mode, func(o *Options) {
		if v.cache {
			o.CacheBytes = 64 << 20
		}
		if edit != nil {
			edit(o)
		}
	})
	if v.cache {
		if err := f.Prepare(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !f.CacheInfo().Writer {
			t.Fatalf("cached filter is not the current slice's writer: %+v", f.CacheInfo())
		}
	}
	return f, rdb, o
}

// newTestFilter returns a filter of mode m on backend be under a fresh
// namespace with small defaults, adjusted by edit.
func newTestFilter(t *testing.T, be backend, m Mode, edit func(*Options)) (*Filter, *redis.Client, Options) {
	t.Helper()
	rdb, ks := be.open(t)
	o := Options{Mode: m, Namespace: ks.Job("j").Dedup(), Window: time.Hour,
		Granularity: 20 * time.Minute, Capacity: 10000, ErrorRate: 0.001}
	if edit != nil {
		edit(&o)
	}
	f, err := New(rdb, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return f, rdb, f.Options()
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// testenvRedis is testenv.Redis with the job tag as the namespace stem.
func testenvRedis(tb testing.TB) (*redis.Client, string) {
	rdb, ks := testenv.Redis(tb)
	return rdb, ks.Job("j").Tag()
}
