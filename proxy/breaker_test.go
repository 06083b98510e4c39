package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/proxy/proxytest"
)

// TestValidator_BreakerAfterEvictions: our network goes down, real
// traffic evicts every proxy before the validator rechecks them, and the
// rechecks fail too. The proxies were usable a moment ago, so the breaker
// opens and keeps them, rather than burying the whole pool.
func TestValidator_BreakerAfterEvictions(t *testing.T) {
	rdb, keys := redisT(t)
	servers, source := httpProxies(t, 5)
	o := testOptions(source)
	o.MaxFailedRounds = 1 // one failed recheck would bury a proxy
	v := newValidator(t, rdb, keys, o)
	if r, err := v.Round(ctxT(t)); err != nil || r.Passed != 5 {
		t.Fatalf("first round = %+v, %v; want 5 passed", r, err)
	}
	for _, s := range servers {
		s.Close() // the network is down
	}
	pool := newPool(t, rdb, keys, func(o *PoolOptions) { o.RecheckAfterEvict = 0 })
	target := mustURL(t, "http://example.com/")
	for range 5 {
		picked, err := pool.Pick(ctxT(t), target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := pool.Report(ctxT(t), picked, ProxyFault("connection refused")); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := pool.Size(ctxT(t)); n != 0 {
		t.Fatalf("%d usable after every proxy was evicted, want 0", n)
	}
	r, err := v.Round(ctxT(t)) // evicted with RecheckAfterEvict 0: due at once
	if err != nil {
		t.Fatal(err)
	}
	if !r.Breaker.Open || !strings.Contains(r.Breaker.Reason, "5 of 5 proxies usable lately failed") {
		t.Errorf("breaker = %+v, want open: 5 of 5 proxies usable lately failed", r.Breaker)
	}
	l, err := pool.List(ctxT(t), true)
	if err != nil {
		t.Fatal(err)
	}
	if l.Tracked != 5 || l.Removed != 0 {
		t.Errorf("%d tracked, %d removed after the outage; want the pool kept (5, 0)", l.Tracked, l.Removed)
	}
	for _, e := range l.Proxies {
		if e.State != StateFailing {
			t.Errorf("%s is %s (%s), want failing, kept for its next recheck", e.Proxy, e.State, e.Reason)
		}
	}
}

// TestValidator_BreakerIgnoresJunk: a source of proxies that never worked
// fails its checks without opening the breaker: they are not evidence
// that our network is down.
func TestValidator_BreakerIgnoresJunk(t *testing.T) {
	rdb, keys := redisT(t)
	var lines []string
	for range 6 {
		closed, err := proxytest.ClosedPort()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, closed)
	}
	o := testOptions(writeSource(t, t.TempDir(), lines...))
	o.MaxFailedRounds, o.BackoffBase, o.BackoffMax = 2, time.Millisecond, time.Millisecond
	v := newValidator(t, rdb, keys, o)
	pool := newPool(t, rdb, keys, nil)
	testenv.Eventually(t, 20*time.Second, "the 6 junk proxies rejected", func() bool {
		r, err := v.Round(ctxT(t))
		if err != nil || r.Breaker.Open {
			t.Fatalf("round = %+v, %v; want the breaker closed", r, err)
		}
		l, err := pool.List(ctxT(t), true)
		return err == nil && l.Removed == 6
	})
}

// TestValidator_BreakerForgetsTheDead: proxies that died for good, together,
// hold the breaker open only for ProvenWindow after their last pass: then
// they are judged on their own and removed, and the breaker closes, while
// a proxy that still works stays usable.
func TestValidator_BreakerForgetsTheDead(t *testing.T) {
	rdb, keys := redisT(t)
	start := starter(t)
	var lines []string
	var dying []*proxytest.Server
	for range 5 {
		s := start(proxytest.NewHTTP())
		dying, lines = append(dying, s), append(lines, s.Line())
	}
	alive := start(proxytest.NewHTTP())
	lines = append(lines, alive.Line())
	o := testOptions(writeSource(t, t.TempDir(), lines...))
	o.MaxFailedRounds, o.BackoffBase, o.BackoffMax = 1, time.Millisecond, time.Millisecond
	o.ProvenWindow = 300 * time.Millisecond
	v := newValidator(t, rdb, keys, o)
	if r, err := v.Round(ctxT(t)); err != nil || r.Passed != 6 {
		t.Fatalf("first round = %+v, %v; want 6 passed", r, err)
	}
	for _, s := range dying {
		s.Close() // these five die for good; our network is fine
	}
	keep, err := Parse(alive.Line())
	if err != nil {
		t.Fatal(err)
	}
	evict(t, newPool(t, rdb, keys, func(o *PoolOptions) { o.RecheckAfterEvict = 0 }), len(dying), keep.ID())
	pool := newPool(t, rdb, keys, nil)
	testenv.Eventually(t, 20*time.Second, "the five dead proxies removed", func() bool {
		if _, err := v.Round(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		l, err := pool.List(ctxT(t), true)
		return err == nil && l.Removed == int64(len(dying))
	})
	r, err := v.Round(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if r.Breaker.Open {
		t.Errorf("breaker still open once the dead were removed: %+v", r.Breaker)
	}
	if n, _ := pool.Size(ctxT(t)); n != 1 {
		t.Errorf("%d usable, want the one alive", n)
	}
}

// evict picks (never keep) and reports a proxy fault n times, as real
// traffic through dead proxies does.
func evict(t *testing.T, pool *Pool, n int, keep ID) {
	t.Helper()
	target := mustURL(t, "http://example.com/")
	for range n {
		picked, err := pool.Pick(ctxT(t), target, []ID{keep})
		if err != nil {
			t.Fatal(err)
		}
		if err := pool.Report(ctxT(t), picked, ProxyFault("connection refused")); err != nil {
			t.Fatal(err)
		}
	}
}
