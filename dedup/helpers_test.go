package dedup

import (
	"crypto/sha1"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

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
func testFPs(tag string, n int) []Fingerprint {
	out := make([]Fingerprint, n)
	for i := range out {
		out[i] = sha1.Sum([]byte(tag + "/" + strconv.Itoa(i)))
	}
	return out
}

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
