package testenv

import (
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// Clock is the clock of an in-process Redis (miniredis, the embedded Redis
// of crawler run) that only the test moves: the server's TIME, which every
// cluster script reads, and key expiry both follow Advance. A lease, a ban,
// a rate token or a dupefilter slice lapses when the test says so, without
// waiting; the same cases on the real Redis stay as conformance tests.
type Clock struct {
	mr  *miniredis.Miniredis
	mu  sync.Mutex
	now time.Time
}

// MovedRedis starts a miniredis whose clock stands still at the current
// time, truncated to the millisecond, until the test advances it. It
// returns a client, keys under a prefix of the test's own, and the clock.
func MovedRedis(t testing.TB) (*redis.Client, cluster.Keys, *Clock) {
	t.Helper()
	mr := miniredis.RunT(t)
	c := &Clock{mr: mr, now: time.Now().Truncate(time.Millisecond)}
	mr.SetTime(c.now)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), DisableIdentity: true})
	t.Cleanup(func() { rdb.Close() })
	return rdb, cluster.Keys{Prefix: UniquePrefix(t)}, c
}

// Now is the server's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the server's time forward by d: TIME reads d later, and
// keys whose TTL ran out in d are gone.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.mr.SetTime(c.now)
	c.mr.FastForward(d)
}
