package politeness

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// worker acquires for host until stop says so, sending one request to url
// per lease; it never sleeps longer than a Grant's Wait.
func worker(ctx context.Context, t *testing.T, b *Budget, host, url string, r Rule,
	stop func() bool, granted func(Grant)) {
	for !stop() && ctx.Err() == nil {
		g, err := b.Acquire(ctx, host, r)
		if err != nil {
			t.Errorf("Acquire: %v", err)
			return
		}
		if len(g.Leases) == 0 {
			time.Sleep(g.Wait)
			continue
		}
		granted(g)
		status := 0
		if resp, err := http.Get(url); err == nil {
			status = resp.StatusCode
			resp.Body.Close()
		}
		if err := g.Leases[0].Done(ctx, status, 0); err != nil {
			t.Errorf("Done: %v", err)
		}
	}
}

// TestBudget_Rate: several Budgets (processes) with several goroutines
// each never exceed the rule's rate in any one-second window of Redis's
// clock, and every request the site saw had a grant. With Burst 1 no two
// grants are closer than 1/RPS either.
func TestBudget_Rate(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			const rps, total = 20, 50
			var hits atomic.Int64
			site := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
			defer site.Close()
			rule := Rule{RPS: rps, Concurrency: 100}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var mu sync.Mutex
			var at []time.Time
			stop := func() bool { mu.Lock(); defer mu.Unlock(); return len(at) >= total }
			record := func(g Grant) { mu.Lock(); at = append(at, g.At); mu.Unlock() }
			var wg sync.WaitGroup
			for range 3 {
				b := newBudget(t, srv.connect(), srv.keys, nil)
				for range 4 {
					wg.Go(func() { worker(ctx, t, b, "rate.test", site.URL, rule, stop, record) })
				}
			}
			wg.Wait()
			if ctx.Err() != nil {
				t.Fatalf("only %d grants before the deadline", len(at))
			}
			slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
			for i := 1; i < len(at); i++ {
				if gap := at[i].Sub(at[i-1]); gap < time.Second/rps {
					t.Fatalf("grants %d and %d are %v apart, want at least %v", i-1, i, gap, time.Second/rps)
				}
			}
			for i, start := range at {
				n := 0
				for _, x := range at[i:] {
					if x.Sub(start) < time.Second {
						n++
					}
				}
				if n > rps {
					t.Fatalf("%d grants in the second from %s, want at most %d", n, start.Format(time.StampMilli), rps)
				}
			}
			if int(hits.Load()) != len(at) {
				t.Errorf("site saw %d requests for %d grants", hits.Load(), len(at))
			}
		})
	}
}

// TestBudget_Concurrency: requests in flight at the site never exceed the
// cap, whichever process sends them.
func TestBudget_Concurrency(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			const limit, total = 3, 60
			var inFlight, most, hits atomic.Int64
			site := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				n := inFlight.Add(1)
				defer inFlight.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				hits.Add(1)
				time.Sleep(20 * time.Millisecond)
			}))
			defer site.Close()
			rule := Rule{RPS: 1000, Burst: 100, Concurrency: limit}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var grants atomic.Int64
			stop := func() bool { return grants.Load() >= total }
			var wg sync.WaitGroup
			for range 3 {
				b := newBudget(t, srv.connect(), srv.keys, func(o *Options) { o.FullWait = 5 * time.Millisecond })
				for range 4 {
					wg.Go(func() { worker(ctx, t, b, "cap.test", site.URL, rule, stop, func(Grant) { grants.Add(1) }) })
				}
			}
			wg.Wait()
			if m := most.Load(); m > limit {
				t.Errorf("%d requests in flight at once, cap %d", m, limit)
			} else if m < limit {
				t.Errorf("at most %d in flight with 12 workers: the test never reached the cap %d", m, limit)
			}
			if hits.Load() != grants.Load() {
				t.Errorf("site saw %d requests for %d grants", hits.Load(), grants.Load())
			}
		})
	}
}

// TestBudget_DeadLease: a lease never released (its process died) stops
// counting after LeaseTTL.
func TestBudget_DeadLease(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			b := newBudget(t, srv.connect(), srv.keys, func(o *Options) { o.LeaseTTL = 300 * time.Millisecond })
			rule := Rule{RPS: 1000, Concurrency: 1}
			if g, err := b.Acquire(ctx, "dead.test", rule); err != nil || len(g.Leases) != 1 {
				t.Fatalf("first Acquire = %+v, %v", g, err)
			} // never released
			g, err := b.Acquire(ctx, "dead.test", rule)
			if err != nil || len(g.Leases) != 0 || g.Reason != ReasonFull || g.Wait <= 0 || g.Wait > 100*time.Millisecond {
				t.Fatalf("second Acquire = %+v, %v; want none, full, wait in (0, FullWait]", g, err)
			}
			if !eventually(10*time.Second, func() bool {
				g, err := b.Acquire(ctx, "dead.test", rule)
				return err == nil && len(g.Leases) == 1
			}) {
				t.Fatal("the dead lease never freed")
			}
		})
	}
}

// TestLease_Renew: a renewed lease outlives its first deadline; one that
// expired cannot be renewed.
func TestLease_Renew(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			b := newBudget(t, srv.connect(), srv.keys, func(o *Options) { o.LeaseTTL = 200 * time.Millisecond })
			rule := Rule{RPS: 1000, Concurrency: 1}
			g, err := b.Acquire(ctx, "renew.test", rule)
			if err != nil || len(g.Leases) != 1 {
				t.Fatalf("Acquire = %+v, %v", g, err)
			}
			for end := time.Now().Add(600 * time.Millisecond); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				if err := g.Leases[0].Renew(ctx); err != nil {
					t.Fatalf("Renew: %v", err)
				}
				if s, err := b.State(ctx, "renew.test"); err != nil || s.InFlight != 1 {
					t.Fatalf("while renewed: %+v, %v; want 1 in flight", s, err)
				}
			}
			if !eventually(10*time.Second, func() bool {
				s, err := b.State(ctx, "renew.test")
				return err == nil && s.InFlight == 0
			}) {
				t.Fatal("lease never expired once no longer renewed")
			}
			if err := g.Leases[0].Renew(ctx); !errors.Is(err, ErrLeaseLost) {
				t.Errorf("Renew after expiry = %v, want ErrLeaseLost", err)
			}
		})
	}
}

// TestBudget_Pause: nobody gets a lease for a paused host until the pause
// ends; other hosts are not held up; a shorter pause does not cut a longer.
func TestBudget_Pause(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			a := newBudget(t, srv.connect(), srv.keys, nil)
			other := newBudget(t, srv.connect(), srv.keys, nil) // another process
			rule := Rule{RPS: 1000}
			if err := a.Pause(ctx, "Paused.Test", 400*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			g, err := other.Acquire(ctx, "paused.test", rule)
			if err != nil || len(g.Leases) != 0 || g.Reason != ReasonPaused || g.Wait <= 0 || g.Wait > 400*time.Millisecond {
				t.Fatalf("Acquire while paused = %+v, %v; want none, paused, wait in (0, 400ms]", g, err)
			}
			if g, err := other.Acquire(ctx, "free.test", rule); err != nil || len(g.Leases) != 1 {
				t.Errorf("another host while one is paused: %+v, %v", g, err)
			}
			if !eventually(10*time.Second, func() bool {
				g, err := other.Acquire(ctx, "paused.test", rule)
				return err == nil && len(g.Leases) == 1
			}) {
				t.Fatal("never granted after the pause")
			}
			if err := a.Pause(ctx, "long.test", 30*time.Second); err != nil {
				t.Fatal(err)
			}
			if err := a.Pause(ctx, "long.test", time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if s, err := a.State(ctx, "long.test"); err != nil || s.Paused < 20*time.Second {
				t.Errorf("after a 30s then a 1ms pause: %+v, %v; want the 30s pause kept", s, err)
			}
		})
	}
}

// TestBudget_Backoff: 429s cut the host's rate (once per CutEvery),
// successes raise it back step by step, and the cut rate spaces grants.
func TestBudget_Backoff(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			b := newBudget(t, srv.connect(), srv.keys, func(o *Options) { o.CutEvery = time.Hour; o.Raise = 0.25 })
			factor := func() float64 {
				s, err := b.State(ctx, "busy.test")
				if err != nil {
					t.Fatal(err)
				}
				return s.Factor
			}
			if f := factor(); f != 1 {
				t.Fatalf("fresh host factor %v, want 1", f)
			}
			for range 3 {
				if err := b.Feedback(ctx, "busy.test", http.StatusTooManyRequests); err != nil {
					t.Fatal(err)
				}
			}
			if f := factor(); f != 0.5 {
				t.Errorf("after a volley of 429s within CutEvery: factor %v, want 0.5", f)
			}
			hasty := newBudget(t, srv.connect(), srv.keys, func(o *Options) { o.CutEvery = 0 })
			_ = hasty.Feedback(ctx, "busy.test", http.StatusServiceUnavailable)
			if f := factor(); f != 0.25 {
				t.Errorf("after another cut: factor %v, want 0.25", f)
			}

			// At RPS 1 and factor 0.25, the next grant is 4 s after this one.
			rule := Rule{RPS: 1}
			if g, err := b.Acquire(ctx, "busy.test", rule); err != nil || len(g.Leases) != 1 {
				t.Fatalf("Acquire = %+v, %v", g, err)
			}
			g, err := b.Acquire(ctx, "busy.test", rule)
			if err != nil || g.Reason != ReasonRate || g.Wait <= 2*time.Second || g.Wait > 4*time.Second {
				t.Errorf("right after a grant at a quarter rate: %+v, %v; want rate, wait in (2s, 4s]", g, err)
			}

			for _, want := range []float64{0.5, 0.75, 1, 1} {
				if err := b.Feedback(ctx, "busy.test", http.StatusOK); err != nil {
					t.Fatal(err)
				}
				if f := factor(); f != want {
					t.Errorf("after a success: factor %v, want %v", f, want)
				}
			}
			if err := b.Feedback(ctx, "busy.test", http.StatusBadGateway); err != nil || factor() != 1 {
				t.Errorf("a 502 changed the factor (err %v)", err)
			}
		})
	}
}

// TestBudget_Done: Done gives the lease back, feeds the backoff and pauses
// the host in one call.
func TestBudget_Done(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx := context.Background()
	b := newBudget(t, rdb, keys, nil)
	g, err := b.Acquire(ctx, "done.test", Rule{RPS: 100})
	if err != nil || len(g.Leases) != 1 {
		t.Fatalf("Acquire = %+v, %v", g, err)
	}
	if err := g.Leases[0].Done(ctx, http.StatusTooManyRequests, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	s, err := b.State(ctx, "done.test")
	if err != nil || s.InFlight != 0 || s.Factor != 0.5 || s.Paused <= 4*time.Second {
		t.Errorf("after Done(429, 5s): %+v, %v; want 0 in flight, factor 0.5, paused ~5s", s, err)
	}
}

// TestBudget_SlowHost: a host that is full, paused or slow does not hold
// up grants for another, in the same batch or across workers.
func TestBudget_SlowHost(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			b := newBudget(t, srv.connect(), srv.keys, nil)
			slow := Rule{RPS: 1000, Concurrency: 1}
			held, err := b.Acquire(ctx, "slow.test", slow) // a request that hangs
			if err != nil || len(held.Leases) != 1 {
				t.Fatalf("Acquire = %+v, %v", held, err)
			}
			gs, err := b.AcquireMany(ctx, []Want{
				{Host: "slow.test", Rule: slow, N: 5},
				{Host: "fast.test", Rule: Rule{RPS: 1000, Burst: 5}, N: 5},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(gs[0].Leases) != 0 || gs[0].Reason != ReasonFull {
				t.Errorf("slow host: %d leases, reason %q; want none, full", len(gs[0].Leases), gs[0].Reason)
			}
			if len(gs[1].Leases) != 5 || gs[1].Wait != 0 || gs[1].Host != "fast.test" {
				t.Errorf("fast host: %+v; want 5 leases and no wait", gs[1])
			}
			tokens := map[string]bool{}
			for _, l := range gs[1].Leases {
				tokens[l.token] = true
			}
			if s, _ := b.State(ctx, "fast.test"); len(tokens) != 5 || s.InFlight != 5 {
				t.Errorf("%d distinct leases, %d in flight; want 5 and 5", len(tokens), s.InFlight)
			}
		})
	}
}

// TestBudget_AcquireManyRoundTrips: one call for many hosts is one round
// trip once the script is loaded.
func TestBudget_AcquireManyRoundTrips(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	var rt roundTrips
	rdb.AddHook(&rt)
	b := newBudget(t, rdb, keys, nil)
	ctx := context.Background()
	wants := []Want{}
	for _, h := range []string{"a.test", "b.test", "c.test", "d.test", "e.test"} {
		wants = append(wants, Want{Host: h, Rule: Rule{RPS: 1000, Burst: 6}, N: 6})
	}
	if _, err := b.Acquire(ctx, "warm.test", Rule{}); err != nil { // may load the script
		t.Fatal(err)
	}
	before := rt.n.Load()
	gs, err := b.AcquireMany(ctx, wants)
	if err != nil {
		t.Fatal(err)
	}
	if n := rt.n.Load() - before; n != 1 {
		t.Errorf("%d round trips for 5 hosts, want 1", n)
	}
	leases := 0
	for _, g := range gs {
		leases += len(g.Leases)
	}
	if leases == 0 {
		t.Errorf("no leases granted")
	}
}

func TestRule_limits(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule Rule
		want limits
	}{
		{"default rate", Rule{}, limits{intervalMS: 1000, burst: 1, cap: 8}},
		{"rps", Rule{RPS: 4, Burst: 3, Concurrency: 2}, limits{intervalMS: 250, burst: 3, cap: 2}},
		{"crawl-delay alone", Rule{CrawlDelay: 5 * time.Second}, limits{intervalMS: 5000, burst: 1, cap: 8}},
		{"crawl-delay caps rps", Rule{RPS: 10, Burst: 4, CrawlDelay: 2 * time.Second}, limits{intervalMS: 2000, burst: 1, cap: 8}},
		{"rps slower than crawl-delay", Rule{RPS: 0.25, CrawlDelay: time.Second}, limits{intervalMS: 4000, burst: 1, cap: 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rule.limits(1); got != tc.want {
				t.Errorf("limits = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	b := newBudget(t, rdb, keys, nil)
	var fe *cluster.FieldError
	for field, r := range map[string]Rule{
		"RPS": {RPS: -1}, "Burst": {Burst: -1}, "Concurrency": {Concurrency: -2}, "CrawlDelay": {CrawlDelay: -time.Second},
	} {
		if _, err := b.Acquire(context.Background(), "x.test", r); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("Acquire with bad %s = %v, want a FieldError naming it", field, err)
		}
	}
	if _, err := b.Acquire(context.Background(), " ", Rule{}); !errors.Is(err, ErrNoHost) {
		t.Errorf("Acquire without host = %v, want ErrNoHost", err)
	}
	opts := DefaultOptions()
	opts.DefaultRPS = 0
	if _, err := New(rdb, opts); !errors.As(err, &fe) || fe.Field != "DefaultRPS" {
		t.Errorf("New with DefaultRPS 0 = %v, want a FieldError", err)
	}
}

func TestHostKeys(t *testing.T) {
	k := cluster.Keys{Prefix: "p"}.Host("a}b{c")
	for _, key := range []string{k.Rate(), k.Leases(), k.Pause()} {
		if want := "{p:host:a%7Db%7Bc}"; key[:len(want)] != want {
			t.Errorf("key %q does not start with the escaped tag %q", key, want)
		}
	}
}

// TestBudget_LeasesExpire: a host's lease set expires a second after its
// last lease would, and a process with shorter leases never cuts short the
// life of a set that holds longer ones.
func TestBudget_LeasesExpire(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := srv.connect()
			long := newBudget(t, rdb, srv.keys, func(o *Options) { o.LeaseTTL = time.Minute })
			short := newBudget(t, rdb, srv.keys, func(o *Options) { o.LeaseTTL = time.Second })
			leases := srv.keys.Host("ttl.test").Leases()
			acquire := func(b *Budget) {
				t.Helper()
				if !eventually(5*time.Second, func() bool {
					g, err := b.Acquire(ctx, "ttl.test", Rule{RPS: 1000, Concurrency: 10})
					return err == nil && len(g.Leases) == 1
				}) {
					t.Fatal("no lease granted")
				}
			}
			acquire(short)
			if ttl := rdb.PTTL(ctx, leases).Val(); ttl <= 0 || ttl > 2*time.Second {
				t.Errorf("a new lease set expires in %v, want within its lease + 1s", ttl)
			}
			acquire(long)
			acquire(short)
			if ttl := rdb.PTTL(ctx, leases).Val(); ttl < 50*time.Second {
				t.Errorf("after a 1m lease and then a 1s one, the set expires in %v; want the 1m lease kept", ttl)
			}
		})
	}
}
