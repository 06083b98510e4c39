package proxy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/proxy/proxytest"
)

// untilRounds runs validation rounds until cond holds, failing the test,
// naming what it waited for, after 20s.
func untilRounds(t *testing.T, v *Validator, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, what, func() bool {
		if cond() {
			return true
		}
		if _, err := v.Round(ctxT(t)); err != nil {
			t.Fatalf("Round: %v", err)
		}
		return cond()
	})
}

func entryOfProxy(t *testing.T, pool *Pool, p Proxy) Entry {
	t.Helper()
	l, err := pool.List(ctxT(t), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Proxies {
		if e.ID == p.ID() {
			return e
		}
	}
	return Entry{}
}

// TestValidator_Lifecycle: a proxy that dies is backed off, then removed
// after MaxFailedRounds and not admitted again from the source; one that
// never worked is rejected the same way.
func TestValidator_Lifecycle(t *testing.T) {
	rdb, keys := redisT(t)
	start := starter(t)
	healthy := start(proxytest.NewHTTP())
	closed, _ := proxytest.ClosedPort()
	src := writeSource(t, t.TempDir(), healthy.Line(), closed)
	o := testOptions(src)
	o.Recheck, o.BackoffBase, o.BackoffMax, o.MaxFailedRounds = time.Millisecond, time.Millisecond, 2*time.Millisecond, 2
	o.SourceInterval = time.Millisecond // read the source every round
	v := newValidator(t, rdb, keys, o)
	pool := newPool(t, rdb, keys, nil)
	hp, cp := mustParse(t, healthy.Line()), mustParse(t, closed)

	untilRounds(t, v, "the proxy rejected", func() bool { return entryOfProxy(t, pool, cp).State == StateRejected })
	if e := entryOfProxy(t, pool, cp); e.Reason != "connection refused" || e.Checks != 2 {
		t.Errorf("closed port = %+v, want rejected after 2 checks, connection refused", e)
	}
	if e := entryOfProxy(t, pool, hp); e.State != StateUsable || e.Checks < 2 || e.Anonymity != Elite || !e.Tunnel {
		t.Errorf("healthy = %+v, want usable, rechecked, elite, tunnel", e)
	}

	healthy.Close()
	untilRounds(t, v, "the proxy dead", func() bool { return entryOfProxy(t, pool, hp).State == StateDead })
	if n, _ := pool.Size(ctxT(t)); n != 0 {
		t.Errorf("pool holds %d usable proxies after its only one died", n)
	}
	r, err := v.Round(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if r.Admitted != 0 || len(r.Sources) != 1 {
		t.Errorf("round after removal = %+v, want the source read and nothing admitted again", r)
	}
}

// TestValidator_Breaker: when the check URL is unreachable, or nearly all
// usable proxies fail at once, the pool is kept and the breaker says so.
func TestValidator_Breaker(t *testing.T) {
	rdb, keys, clock := testenv.MovedRedis(t)
	servers, source := httpProxies(t, 5)
	o := testOptions(source)
	o.Recheck, o.MaxFailedRounds = time.Millisecond, 1
	v := newValidator(t, rdb, keys, o)
	pool := newPool(t, rdb, keys, nil)
	if _, err := v.Round(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if n, _ := pool.Size(ctxT(t)); n != 5 {
		t.Fatalf("%d usable, want 5", n)
	}
	for _, s := range servers {
		s.Close()
	}
	clock.Advance(2 * time.Millisecond) // the rechecks come due
	r, err := v.Round(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := pool.Breaker(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Breaker.Open || !b.Open || !strings.Contains(b.Reason, "5 of 5 proxies usable lately failed") {
		t.Errorf("breaker = %+v (round %+v), want open: 5 of 5 proxies usable lately failed", b, r.Breaker)
	}
	if n, _ := pool.Size(ctxT(t)); n != 5 {
		t.Errorf("%d usable after the breaker opened, want the pool kept (5)", n)
	}

}

func TestValidator_BreakerCheckURLDown(t *testing.T) {
	rdb, keys := redisT(t)
	healthy := starter(t)(proxytest.NewHTTP())
	closed, _ := proxytest.ClosedPort()
	o := testOptions(writeSource(t, t.TempDir(), healthy.Line()))
	o.JudgeURL = closed + "/"
	v := newValidator(t, rdb, keys, o)
	r, err := v.Round(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Breaker.Open || !strings.HasPrefix(r.Breaker.Reason, "check url unreachable directly") ||
		r.Admitted != 1 || r.Checked != 0 || healthy.Requests() != 0 {
		t.Errorf("round = %+v, proxy saw %d; want breaker open (check url unreachable), 1 admitted, nothing checked",
			r, healthy.Requests())
	}
	if e := entryOfProxy(t, newPool(t, rdb, keys, nil), mustParse(t, healthy.Line())); e.State != StateNew {
		t.Errorf("proxy = %+v, want still new (held, not blamed)", e)
	}
}

// TestValidator_Lease: one validator works at a time across masters; Run
// gives the lease up when it ends.
func TestValidator_Lease(t *testing.T) {
	rdb, keys := redisT(t)
	healthy := starter(t)(proxytest.NewHTTP())
	o := testOptions(writeSource(t, t.TempDir(), healthy.Line()))
	a, b := newValidator(t, rdb, keys, o), newValidator(t, rdb, keys, o)
	pool := newPool(t, rdb, keys, nil)

	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	testenv.Eventually(t, 20*time.Second, "Run filling the pool", func() bool { n, _ := pool.Size(ctx); return n == 1 })
	if _, err := b.Round(ctxT(t)); !errors.Is(err, ErrLeaseHeld) {
		t.Errorf("second validator's Round = %v, want ErrLeaseHeld", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil after cancel", err)
	}
	if _, err := b.Round(ctxT(t)); err != nil {
		t.Errorf("second validator's Round after the first stopped = %v, want the lease", err)
	}
}

// TestValidator_Refill: below MinSize the sources are read again soon, so a
// proxy added to the source file reaches the pool (a job with proxy:
// require waiting on an empty pool resumes).
func TestValidator_Refill(t *testing.T) {
	rdb, keys := redisT(t)
	dir := t.TempDir()
	src := writeSource(t, dir, "# nothing yet")
	o := testOptions(src)
	o.SourceInterval, o.RefillInterval, o.MinSize = time.Hour, time.Millisecond, 1
	v := newValidator(t, rdb, keys, o)
	pool := newPool(t, rdb, keys, nil)
	if _, err := v.Round(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Pick(ctxT(t), mustURL(t, "http://example.com/"), nil); !errors.Is(err, ErrEmpty) {
		t.Fatalf("Pick = %v, want ErrEmpty", err)
	}
	healthy := starter(t)(proxytest.NewHTTP())
	writeSource(t, dir, healthy.Line())
	untilRounds(t, v, "one proxy left in the pool", func() bool { n, _ := pool.Size(ctxT(t)); return n == 1 })
	p, err := pool.Pick(ctxT(t), mustURL(t, "http://example.com/"), nil)
	if err != nil || p.Proxy.Host() != healthy.Addr() {
		t.Errorf("Pick = %v %v, want the added proxy", p.Proxy, err)
	}
}
