package proxy

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// servers runs f against the real Redis and against miniredis, the
// embedded Redis of crawler run: the scripts must work on both.
func servers(t *testing.T, f func(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys)) {
	t.Run("redis", func(t *testing.T) {
		rdb, keys := redisT(t)
		f(t, rdb, keys)
	})
	t.Run("miniredis", func(t *testing.T) {
		mr := miniredis.RunT(t)
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { rdb.Close() })
		f(t, rdb, cluster.Keys{Prefix: "mini"})
	})
}

// seedPool puts n synthetic proxies in the pool, proxy i with latency
// (i+1)*10ms (so proxy 0 scores best), each with cap concurrent requests;
// tunnel says which support CONNECT.
func seedPool(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys, n, cap int, tunnel func(int) bool) []Proxy {
	t.Helper()
	o := testOptions()
	o.CheckURL = "http://127.0.0.1:9/" // never contacted
	o.ProxyConcurrency = cap
	v := newValidator(t, rdb, keys, o)
	seeds := make([]Seeded, n)
	out := make([]Proxy, n)
	for i := range n {
		out[i] = mustParse(t, fmt.Sprintf("http://user%d:pw@10.0.0.%d:3128", i, i+1))
		seeds[i] = Seeded{Proxy: out[i], Latency: time.Duration(i+1) * 10 * time.Millisecond,
			Tunnel: tunnel == nil || tunnel(i)}
	}
	if err := v.Seed(ctxT(t), seeds); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	return out
}

func TestPool_Pick(t *testing.T) {
	target := mustURL(t, "http://example.com/a")
	servers(t, func(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys) {
		ctx := ctxT(t)
		best1 := newPool(t, rdb, keys, func(o *PoolOptions) { o.Best = 1 })
		if _, err := best1.Pick(ctx, target, nil); !errors.Is(err, ErrEmpty) {
			t.Fatalf("Pick on an empty pool = %v, want ErrEmpty", err)
		}
		ps := seedPool(t, rdb, keys, 3, 1, nil)

		// The best first; a proxy at its cap (1) is skipped; none free is
		// ErrBusy; a report frees the slot.
		var picks []Picked
		for i := range 3 {
			p, err := best1.Pick(ctx, target, nil)
			if err != nil || p.ID() != ps[i].ID() {
				t.Fatalf("pick %d = %v %v, want %v", i, p.Proxy, err, ps[i])
			}
			if p.URL().String() != ps[i].URL().String() {
				t.Errorf("picked URL lost its credentials")
			}
			picks = append(picks, p)
		}
		if _, err := best1.Pick(ctx, target, nil); !errors.Is(err, ErrBusy) {
			t.Fatalf("Pick with every proxy at its cap = %v, want ErrBusy", err)
		}
		if err := best1.Report(ctx, picks[0], Success(10*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if p, err := best1.Pick(ctx, target, nil); err != nil || p.ID() != ps[0].ID() {
			t.Fatalf("pick after report = %v %v, want %v", p.Proxy, err, ps[0])
		}

		// A slot whose lease lapsed (its slave died) is freed by the next pick.
		if err := rdb.ZAdd(ctx, keys.Proxies().Slots(), redis.Z{Score: 0,
			Member: string(picks[1].ID()) + " " + picks[1].token}).Err(); err != nil {
			t.Fatal(err)
		}
		if p, err := best1.Pick(ctx, target, nil); err != nil || p.ID() != ps[1].ID() {
			t.Fatalf("pick after a lapsed slot = %v %v, want %v", p.Proxy, err, ps[1])
		}
	})
}

func TestPool_PickExcludeAndTunnel(t *testing.T) {
	servers(t, func(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys) {
		ctx := ctxT(t)
		ps := seedPool(t, rdb, keys, 3, 8, func(i int) bool { return i != 0 })
		pool := newPool(t, rdb, keys, func(o *PoolOptions) { o.Best = 1 })
		plain, secure := mustURL(t, "http://example.com/"), mustURL(t, "https://example.com/")
		if p, _ := pool.Pick(ctx, plain, nil); p.ID() != ps[0].ID() {
			t.Errorf("http pick = %v, want the best, %v", p.Proxy, ps[0])
		}
		if p, _ := pool.Pick(ctx, secure, nil); p.ID() != ps[1].ID() {
			t.Errorf("https pick = %v, want %v (the best cannot CONNECT)", p.Proxy, ps[1])
		}
		// A retry goes through another proxy.
		if p, _ := pool.Pick(ctx, plain, []ID{ps[0].ID(), ps[1].ID()}); p.ID() != ps[2].ID() {
			t.Errorf("retry pick = %v, want %v", p.Proxy, ps[2])
		}
		if _, err := pool.Pick(ctx, plain, []ID{ps[0].ID(), ps[1].ID(), ps[2].ID()}); !errors.Is(err, ErrUnavailable) {
			t.Errorf("pick excluding all = %v, want ErrUnavailable", err)
		}
	})
}

func TestPool_Report(t *testing.T) {
	a, b := mustURL(t, "http://a.example/"), mustURL(t, "http://b.example/")
	servers(t, func(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys) {
		ctx := ctxT(t)
		ps := seedPool(t, rdb, keys, 3, 8, nil)
		pool := newPool(t, rdb, keys, func(o *PoolOptions) { o.Best = 1; o.EvictAfterTimeouts = 2 })
		pk := keys.Proxies()
		score := func(p Proxy) float64 { return rdb.ZScore(ctx, pk.Usable(), string(p.ID())).Val() }

		// 403 from host a bans the proxy for a only.
		p0, _ := pool.Pick(ctx, a, nil)
		if err := pool.Report(ctx, p0, Banned(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if p, _ := pool.Pick(ctx, a, nil); p.ID() != ps[1].ID() {
			t.Errorf("pick for the banning host = %v, want %v", p.Proxy, ps[1])
		}
		if p, _ := pool.Pick(ctx, b, nil); p.ID() != ps[0].ID() {
			t.Errorf("pick for another host = %v, want %v (banned for a only)", p.Proxy, ps[0])
		}

		// A target's 5xx changes nothing but the counter.
		before := score(ps[0])
		p, _ := pool.Pick(ctx, b, nil)
		if err := pool.Report(ctx, p, TargetFault()); err != nil || score(ps[0]) != before {
			t.Errorf("target fault: err %v, score %v -> %v, want unchanged", err, before, score(ps[0]))
		}

		// A timeout lowers the score and cools the proxy down; a streak of
		// EvictAfterTimeouts evicts it.
		p, _ = pool.Pick(ctx, b, nil)
		if err := pool.Report(ctx, p, Timeout()); err != nil || score(ps[0]) >= before {
			t.Errorf("timeout: err %v, score %v -> %v, want lower", err, before, score(ps[0]))
		}
		if p, _ := pool.Pick(ctx, b, nil); p.ID() == ps[0].ID() {
			t.Errorf("a proxy cooling down after a timeout was picked")
		}
		if err := rdb.ZRem(ctx, pk.Cooldown(), string(ps[0].ID())).Err(); err != nil {
			t.Fatal(err)
		}
		p, _ = pool.Pick(ctx, b, []ID{ps[1].ID(), ps[2].ID()})
		if p.ID() != ps[0].ID() {
			t.Fatalf("pick = %v, want %v", p.Proxy, ps[0])
		}
		_ = pool.Report(ctx, p, Timeout())
		if usableIDs(t, rdb, keys)[ps[0].ID()] {
			t.Errorf("proxy still usable after %d timeouts in a row", 2)
		}

		// Refused, 407 or garbage evicts at once; the validator rechecks it.
		p, _ = pool.Pick(ctx, b, nil)
		if p.ID() != ps[1].ID() {
			t.Fatalf("pick = %v, want %v", p.Proxy, ps[1])
		}
		if err := pool.Report(ctx, p, ProxyFault("connection refused")); err != nil {
			t.Fatal(err)
		}
		l, err := pool.List(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		got := map[ID]Entry{}
		for _, e := range l.Proxies {
			got[e.ID] = e
		}
		if e := got[ps[1].ID()]; e.State != StateFailing || e.Reason != "connection refused" || e.Evictions != 1 {
			t.Errorf("evicted proxy = %+v, want failing, connection refused, 1 eviction", e)
		}
		if e := got[ps[0].ID()]; e.Timeouts != 2 || e.Bans != 1 || e.TargetErrors != 1 || e.State != StateFailing {
			t.Errorf("proxy 0 = %+v, want 2 timeouts, 1 ban, 1 target error, failing", e)
		}
		if l.Usable != 1 || len(l.Proxies) != 3 {
			t.Errorf("listing: %d usable, %d listed; want 1 and 3", l.Usable, len(l.Proxies))
		}
		for _, e := range l.Proxies {
			if e.InFlight < 0 {
				t.Errorf("%s: %d in flight", e.Proxy, e.InFlight)
			}
		}
	})
}
