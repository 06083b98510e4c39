package dedup

import (
	"crypto/sha1"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/redis/go-redis/v9"
)

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

// newTestFilter returns a filter of mode m under a fresh namespace with
// small defaults, adjusted by edit.
func newTestFilter(t *testing.T, m Mode, edit func(*Options)) (*Filter, *redis.Client, Options) {
	t.Helper()
	rdb, ks := testenv.Redis(t)
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
