package politeness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// process is one process's Gates, running until the test ends.
type process struct {
	gates  *Gates
	budget *Budget
	stop   context.CancelFunc
	done   chan struct{}
}

func startGates(t testing.TB, rdb redis.UniversalClient, keys cluster.Keys, tune func(*Options)) *process {
	t.Helper()
	b := newBudget(t, rdb, keys, tune)
	p := &process{gates: b.NewGates(nil), budget: b, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	go func() { defer close(p.done); _ = p.gates.Run(ctx) }()
	t.Cleanup(p.close)
	return p
}

// close stops the process gracefully: its slots go back.
func (p *process) close() { p.stop(); <-p.done }

// fast are options that let a test see shares move and leases lapse in
// fractions of a second.
func fast(o *Options) {
	o.LeaseTTL, o.Heartbeat, o.Contended, o.Linger = 600*time.Millisecond, 50*time.Millisecond, 10*time.Millisecond, 100*time.Millisecond
	o.MinRound = 5 * time.Millisecond
}

// noBeats are options under which nothing can come from a heartbeat
// (half an hour) or a lapsed hold (an hour), while slots move within
// fractions of a second.
func noBeats(o *Options) {
	o.LeaseTTL, o.Heartbeat, o.Contended, o.Linger = time.Hour, 30*time.Minute, 10*time.Millisecond, 100*time.Millisecond
}

// send enters host n times from `workers` goroutines, holding each pass
// for hold, and counts how many are in flight at once.
type sender struct {
	inflight, peak, passes atomic.Int64
	mu                     sync.Mutex
	at                     []time.Time
}

func (s *sender) run(t testing.TB, ctx context.Context, g *Gates, host string, rule Rule, n, workers int, hold time.Duration, status int) {
	t.Helper()
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				p, err := g.Enter(ctx, host, rule)
				if err != nil {
					t.Errorf("Enter: %v", err)
					return
				}
				s.mu.Lock()
				s.at = append(s.at, p.granted) // not time.Now(): a loaded machine wakes the goroutine late
				s.mu.Unlock()
				in := s.inflight.Add(1)
				for {
					peak := s.peak.Load()
					if in <= peak || s.peak.CompareAndSwap(peak, in) {
						break
					}
				}
				time.Sleep(hold)
				s.inflight.Add(-1)
				s.passes.Add(1)
				p.Done(status, 0)
			}
		})
	}
	wg.Wait()
}

// busiest is the most passes within any span of d.
func (s *sender) busiest(d time.Duration) int {
	s.mu.Lock()
	ts := slices.Clone(s.at)
	s.mu.Unlock()
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	most, lo := 0, 0
	for hi := range ts {
		for ts[hi].Sub(ts[lo]) >= d {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

// TestGates_Cap: three processes with eight goroutines each never have
// more requests in flight to one host than its cap, and use all of it.
func TestGates_Cap(t *testing.T) {
	forServers(t, func(t *testing.T, srv server, ctx context.Context) {
		rule := Rule{RPS: MaxRPS, Burst: 1000, Concurrency: 5}
		var s sender
		var wg sync.WaitGroup
		for range 3 {
			p := startGates(t, srv.connect(), srv.keys, fast)
			wg.Go(func() { s.run(t, ctx, p.gates, "cap.test", rule, 120, 8, 2*time.Millisecond, 200) })
		}
		wg.Wait()
		if got := s.passes.Load(); got != 360 {
			t.Fatalf("%d requests went, want 360", got)
		}
		if peak := s.peak.Load(); peak > 5 || peak < 4 {
			t.Errorf("peak in flight %d, want the cap of 5 (and not less than 4)", peak)
		}
	})
}

// TestGates_Rate: three processes never go over the host's rate in any
// one-second span: the rate plus its burst.
func TestGates_Rate(t *testing.T) {
	forServers(t, func(t *testing.T, srv server, ctx context.Context) {
		const rps, burst = 40, 4
		rule := Rule{RPS: rps, Burst: burst, Concurrency: 100}
		var s sender
		var wg sync.WaitGroup
		for range 3 {
			p := startGates(t, srv.connect(), srv.keys, fast)
			wg.Go(func() { s.run(t, ctx, p.gates, "rate.test", rule, 40, 4, 0, 200) })
		}
		wg.Wait()
		if most := s.busiest(time.Second); most > rps+burst {
			t.Errorf("%d requests within one second; the rate is %d with a burst of %d", most, rps, burst)
		}
	})
}

// TestGates_FairShare: a process that needs one slot (a master walking
// list pages) gets it while two others that could use the whole cap hold
// it, and the two share the rest evenly.
func TestGates_FairShare(t *testing.T) {
	forServers(t, func(t *testing.T, srv server, ctx context.Context) {
		rule := Rule{RPS: MaxRPS, Burst: 1000, Concurrency: 9}
		busy := [2]*process{startGates(t, srv.connect(), srv.keys, fast), startGates(t, srv.connect(), srv.keys, fast)}
		var stop atomic.Bool
		var passes [2]atomic.Int64
		var wg sync.WaitGroup
		for i, p := range busy {
			for range 20 {
				wg.Go(func() {
					for !stop.Load() && ctx.Err() == nil {
						pass, err := p.gates.Enter(ctx, "fair.test", rule)
						if err != nil {
							return
						}
						passes[i].Add(1)
						time.Sleep(time.Millisecond)
						pass.Done(200, 0)
					}
				})
			}
		}
		defer func() { stop.Store(true); wg.Wait() }()
		testenv.Eventually(t, 10*time.Second, "the busy processes hold the whole cap", func() bool {
			st, err := busy[0].budget.State(ctx, "fair.test")
			return err == nil && st.Held == 9
		})
		small := startGates(t, srv.connect(), srv.keys, fast)
		for range 5 { // one list page at a time, as a master walks
			pass, err := small.gates.Enter(ctx, "fair.test", rule)
			if err != nil {
				t.Fatalf("the process needing one slot never got it: %v", err)
			}
			pass.Done(200, 0)
		}
		a, b := passes[0].Load(), passes[1].Load()
		testenv.Eventually(t, 10*time.Second, "the two busy processes share the cap evenly", func() bool {
			da, db := passes[0].Load()-a, passes[1].Load()-b
			return da > 200 && db > 200 && da < 2*db && db < 2*da
		})
	})
}

// TestGates_DeadProcess: the slots of a process that stops renewing them
// (it died, or cannot reach Redis) free after the lease, and another
// process takes them; the lapsed one starts nothing on them meanwhile.
func TestGates_DeadProcess(t *testing.T) {
	forServers(t, func(t *testing.T, srv server, ctx context.Context) {
		rule := Rule{RPS: MaxRPS, Burst: 1000, Concurrency: 2}
		rdb := srv.connect()
		dead := startGates(t, rdb, srv.keys, fast)
		held := make([]*Pass, 2)
		for i := range held {
			p, err := dead.gates.Enter(ctx, "dead.test", rule)
			if err != nil {
				t.Fatal(err)
			}
			held[i] = p
		}
		_ = rdb.Close() // it can no longer renew or give back
		other := startGates(t, srv.connect(), srv.keys, fast)
		if _, err := other.gates.Enter(ctx, "dead.test", rule); err != nil {
			t.Fatalf("the dead process's slots never came back: %v", err)
		}
		held[0].Done(200, 0) // the dead process's own request ends...
		short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancelShort()
		if _, err := dead.gates.Enter(short, "dead.test", rule); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a process whose slots lapsed started a request on them: %v", err)
		}
	})
}

// TestGates_Pause: a 429 with Retry-After pauses the host for every
// process: one that asks after it is told waits for the pause to end.
func TestGates_Pause(t *testing.T) {
	forServers(t, func(t *testing.T, srv server, ctx context.Context) {
		rule := Rule{RPS: MaxRPS, Burst: 1000, Concurrency: 4}
		a := startGates(t, srv.connect(), srv.keys, fast)
		p, err := a.gates.Enter(ctx, "pause.test", rule)
		if err != nil {
			t.Fatal(err)
		}
		p.Done(http.StatusTooManyRequests, 1500*time.Millisecond)
		testenv.Eventually(t, 5*time.Second, "the pause reaches Redis", func() bool {
			st, err := a.budget.State(ctx, "pause.test")
			return err == nil && st.Paused > 0
		})
		b := startGates(t, srv.connect(), srv.keys, fast)
		short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancelShort()
		if _, err := b.gates.Enter(short, "pause.test", rule); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("another process sent a request to a paused host: %v", err)
		}
		if _, err := b.gates.Enter(ctx, "pause.test", rule); err != nil {
			t.Errorf("the host never came back after its pause: %v", err)
		}
	})
}

// TestGates_Backoff: a few throttled answers among many good ones (one
// flaky URL's 503) leave the host's rate alone; a host that throttles
// most requests is cut, and recovers as it answers well again.
func TestGates_Backoff(t *testing.T) {
	forServers(t, func(t *testing.T, srv server, ctx context.Context) {
		rule := Rule{RPS: MaxRPS, Burst: 1000, Concurrency: 8}
		p := startGates(t, srv.connect(), srv.keys, func(o *Options) { fast(o); o.Window = 5 * time.Second })
		answer := func(host string, statuses ...int) {
			t.Helper()
			for _, st := range statuses {
				pass, err := p.gates.Enter(ctx, host, rule)
				if err != nil {
					t.Fatal(err)
				}
				pass.Done(st, 0)
			}
		}
		factor := func(host string) float64 {
			var f float64
			testenv.Eventually(t, 2*time.Second, "the answers reach Redis", func() bool {
				st, err := p.budget.State(ctx, host)
				f = st.Factor
				return err == nil && p.gates.flushed(host)
			})
			return f
		}
		flaky := make([]int, 0, 100)
		for i := range 100 {
			flaky = append(flaky, map[bool]int{true: 503, false: 200}[i%20 == 0])
		}
		answer("flaky.test", flaky...)
		if f := factor("flaky.test"); f != 1 {
			t.Errorf("5%% of answers 503: rate factor %.3f, want 1 (untouched)", f)
		}
		answer("overloaded.test", 429, 503, 200, 429, 503, 429)
		if f := factor("overloaded.test"); f > 0.5 {
			t.Errorf("most answers throttled: rate factor %.3f, want cut to 0.5 or less", f)
		}
		ok := make([]int, 50)
		for i := range ok {
			ok[i] = 200
		}
		answer("overloaded.test", ok...)
		if f := factor("overloaded.test"); f != 1 {
			t.Errorf("after 50 good answers the rate factor is %.3f, want back to 1", f)
		}
	})
}

// TestGates_RoundTrips: a process's requests to several hosts cost Redis
// a sync now and then, not a round trip each.
func TestGates_RoundTrips(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	var rt roundTrips
	rdb.AddHook(&rt)
	p := startGates(t, rdb, keys, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rule := Rule{RPS: MaxRPS, Burst: 1000, Concurrency: 16}
	var s sender
	var wg sync.WaitGroup
	for h := range 5 {
		wg.Go(func() { s.run(t, ctx, p.gates, fmt.Sprintf("h%d.test", h), rule, 400, 16, 0, 200) })
	}
	wg.Wait()
	if n := rt.n.Load(); n > 2000/20 {
		t.Errorf("2000 requests to 5 hosts took %d round trips to Redis, want at most %d", n, 2000/20)
	}
	t.Logf("2000 requests, %d round trips", rt.n.Load())
}

// TestGates_StopGivesBack: a process that stops gracefully gives its
// slots back at once, and leaves no entry behind.
func TestGates_StopGivesBack(t *testing.T) {
	forServers(t, func(t *testing.T, srv server, ctx context.Context) {
		p := startGates(t, srv.connect(), srv.keys, nil)
		pass, err := p.gates.Enter(ctx, "stop.test", Rule{RPS: MaxRPS, Burst: 10, Concurrency: 3})
		if err != nil {
			t.Fatal(err)
		}
		pass.Done(200, 0)
		if st, _ := p.budget.State(ctx, "stop.test"); st.Held != 1 {
			t.Fatalf("held %d slots before the stop, want 1", st.Held)
		}
		p.close()
		if st, err := p.budget.State(ctx, "stop.test"); err != nil || st.Held != 0 || st.Holders != 0 {
			t.Errorf("after a graceful stop: %+v, %v; want nothing held", st, err)
		}
	})
}

// TestGates_LingerGivesBack: a process whose demand ended (a master whose
// list walk is over) gives its slots back once it has lingered, not at its
// next heartbeat, and a process with requests waiting that holds less than
// it could use takes them up: it ends up with the whole cap. Heartbeats
// are half an hour here, so neither can come from one.
func TestGates_LingerGivesBack(t *testing.T) {
	forServers(t, func(t *testing.T, srv server, ctx context.Context) {
		rule := Rule{RPS: MaxRPS, Burst: 1000, Concurrency: 4}
		walker := startGates(t, srv.connect(), srv.keys, noBeats)
		pass, err := walker.gates.Enter(ctx, "linger.test", rule)
		if err != nil {
			t.Fatal(err)
		}
		pass.Done(200, 0) // its walk is over
		busy := startGates(t, srv.connect(), srv.keys, noBeats)
		var inflight, peak atomic.Int64
		var stop atomic.Bool
		var wg sync.WaitGroup
		defer func() { stop.Store(true); wg.Wait() }()
		for range 20 {
			wg.Go(func() {
				for !stop.Load() && ctx.Err() == nil {
					p, err := busy.gates.Enter(ctx, "linger.test", rule)
					if err != nil {
						return
					}
					n := inflight.Add(1)
					for m := peak.Load(); n > m && !peak.CompareAndSwap(m, n); m = peak.Load() {
					}
					time.Sleep(time.Millisecond)
					inflight.Add(-1)
					p.Done(200, 0)
				}
			})
		}
		testenv.Eventually(t, 10*time.Second, "the busy process has the whole cap in flight", func() bool {
			return peak.Load() == 4
		})
	})
}

// TestGates_FastHostBooksForItsSlots: a process whose slots, not the
// host's rate, bound it (a rate of 10,000/s, 16 slots, 64 requests at a
// time) books as many times a round as its slots use, not as many as it
// happened to pass at before: the pace it passes at is the bookings' own
// while they run out under free slots. Counted in round trips, not time.
func TestGates_FastHostBooksForItsSlots(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	var rt roundTrips
	rdb.AddHook(&rt)
	p := startGates(t, rdb, keys, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rule := Rule{RPS: 10000, Burst: 1000, Concurrency: 16}
	var s sender
	s.run(t, ctx, p.gates, "fast.test", rule, 3000, 64, time.Millisecond, 200)
	if n := rt.n.Load(); n > 3000/75 {
		t.Errorf("3000 requests, 16 at a time, took %d round trips to Redis, want at most %d", n, 3000/75)
	}
	t.Logf("3000 requests, %d round trips", rt.n.Load())
}

// TestGates_LeaverGivesBackToAHolder: a process that holds its share of a
// cap with a request that stays on the wire learns of the slot another
// process gave back on leaving, though nothing of its own moves: its
// second request goes. Heartbeats are half an hour here, so it cannot come
// from one.
func TestGates_LeaverGivesBackToAHolder(t *testing.T) {
	forServers(t, func(t *testing.T, srv server, ctx context.Context) {
		rule := Rule{RPS: MaxRPS, Burst: 1000, Concurrency: 2}
		walker := startGates(t, srv.connect(), srv.keys, noBeats)
		walk, err := walker.gates.Enter(ctx, "leaver.test", rule)
		if err != nil {
			t.Fatal(err)
		}
		holder := startGates(t, srv.connect(), srv.keys, noBeats)
		first, err := holder.gates.Enter(ctx, "leaver.test", rule)
		if err != nil {
			t.Fatal(err)
		}
		defer first.Done(200, 0) // held on the wire until the test ends
		second := make(chan error, 1)
		go func() {
			p, err := holder.gates.Enter(ctx, "leaver.test", rule)
			if err == nil {
				p.Done(200, 0)
			}
			second <- err
		}()
		walk.Done(200, 0) // the walker leaves the host
		select {
		case err := <-second:
			if err != nil {
				t.Fatalf("second Enter: %v", err)
			}
		case <-ctx.Done():
			t.Fatal("the holder never got the slot the walker gave back")
		}
	})
}

// TestGates_Parked: waiters of a paused host count as parked, and so do
// those a host's rate cannot start soon (a long Crawl-delay); those of a
// host that is merely busy do not.
func TestGates_Parked(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	p := startGates(t, rdb, keys, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rule := Rule{RPS: MaxRPS, Burst: 100, Concurrency: 1}
	first, err := p.gates.Enter(ctx, "parked.test", rule)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for range 3 {
		wg.Go(func() { _, _ = p.gates.Enter(ctx, "parked.test", rule) })
	}
	testenv.Eventually(t, 5*time.Second, "three requests wait", func() bool { return p.gates.Waiting() == 3 })
	if n := p.gates.Parked(2 * time.Second); n != 0 {
		t.Errorf("%d parked behind a busy host, want 0", n)
	}
	first.Done(http.StatusTooManyRequests, time.Minute)
	if n := p.gates.Parked(2 * time.Second); n != 3 {
		t.Errorf("%d parked behind a host paused for a minute, want 3", n)
	}
	slow := Rule{CrawlDelay: 30 * time.Second, Concurrency: 4}
	if _, err := p.gates.Enter(ctx, "slow.test", slow); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		wg.Go(func() { _, _ = p.gates.Enter(ctx, "slow.test", slow) })
	}
	testenv.Eventually(t, 5*time.Second, "the three behind a Crawl-delay of 30s are parked", func() bool {
		return p.gates.Parked(2*time.Second) == 3+3
	})
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
	p := startGates(t, rdb, keys, nil)
	var fe *cluster.FieldError
	for field, r := range map[string]Rule{
		"RPS": {RPS: -1}, "Burst": {Burst: -1}, "Concurrency": {Concurrency: -2}, "CrawlDelay": {CrawlDelay: -time.Second},
	} {
		if _, err := p.gates.Enter(context.Background(), "x.test", r); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("Enter with bad %s = %v, want a FieldError naming it", field, err)
		}
	}
	if _, err := p.gates.Enter(context.Background(), " ", Rule{}); !errors.Is(err, ErrNoHost) {
		t.Errorf("Enter without host = %v, want ErrNoHost", err)
	}
	opts := DefaultOptions()
	opts.DefaultRPS = 0
	if _, err := New(rdb, opts); !errors.As(err, &fe) || fe.Field != "DefaultRPS" {
		t.Errorf("New with DefaultRPS 0 = %v, want a FieldError", err)
	}
}

func TestShardKeys(t *testing.T) {
	k := cluster.Keys{Prefix: "p"}.Politeness(3)
	for _, key := range []string{k.Hosts(), k.Live()} {
		if want := "{p:polite:3}"; key[:len(want)] != want {
			t.Errorf("key %q does not start with the tag %q", key, want)
		}
	}
	seen := map[int]bool{}
	for i := range 200 {
		s := ShardOf(fmt.Sprintf("h%d.test", i), ClusterShards)
		if s < 0 || s >= ClusterShards {
			t.Fatalf("shard %d of %d", s, ClusterShards)
		}
		seen[s] = true
	}
	if len(seen) < ClusterShards {
		t.Errorf("200 hosts fell in %d of %d shards", len(seen), ClusterShards)
	}
	if ShardOf("a.test", 1) != 0 || ShardOf("a.test", 16) != ShardOf("A.TEST", 16) && normalize("A.TEST") == "a.test" {
		t.Errorf("ShardOf is not stable")
	}
}

// TestLimits_booking: requests sent late by up to their lateness, on
// clocks off by clockError, never let more through than the rule's burst:
// the booked burst is cut by what the lateness is worth at the rate, and
// a burst of 1 keeps its spacing (lateness and error below the interval).
func TestLimits_booking(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lim   limits
		late  time.Duration
		burst int
	}{
		{"5 rps, burst 1", limits{intervalMS: 200, burst: 1}, 25 * time.Millisecond, 1},
		{"20 rps, burst 2", limits{intervalMS: 50, burst: 2}, 12500 * time.Microsecond, 1},
		{"40 rps, burst 4", limits{intervalMS: 25, burst: 4}, 18750 * time.Microsecond, 3},
		{"100 rps, burst 10", limits{intervalMS: 10, burst: 10}, 22500 * time.Microsecond, 7},
		{"10000 rps, burst 1000", limits{intervalMS: 0.1, burst: 1000}, 24975 * time.Microsecond, 730},
		{"crawl-delay 10s", limits{intervalMS: 10000, burst: 1}, 25 * time.Millisecond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			late, burst := tc.lim.booking(25*time.Millisecond, clockError)
			if late != tc.late || burst != tc.burst {
				t.Errorf("booking = %v, %d; want %v, %d", late, burst, tc.late, tc.burst)
			}
			interval := time.Duration(tc.lim.intervalMS * float64(time.Millisecond))
			slack := late + 2*clockError
			if tc.lim.burst == 1 && slack >= interval {
				t.Errorf("burst 1: lateness %v and clock error leave no spacing in an interval of %v", late, interval)
			}
			if extra := int(math.Ceil(float64(slack) / float64(interval))); tc.lim.burst > 1 && burst+extra > tc.lim.burst {
				t.Errorf("a booked burst of %d plus %d late is more than the rule's %d", burst, extra, tc.lim.burst)
			}
		})
	}
}

// TestGates_RefillAtOnce: when a process's tokens run out, or drop
// after their life, while requests still wait, it asks for more at once,
// not at its next heartbeat. With a heartbeat of 5s and tokens that keep
// a few milliseconds, 300 requests that each end at once would take
// minutes if each refill waited for a heartbeat.
func TestGates_RefillAtOnce(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	p := startGates(t, rdb, keys, func(o *Options) { o.LeaseTTL, o.Heartbeat, o.Contended = 20*time.Second, 5*time.Second, time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var s sender
	s.run(t, ctx, p.gates, "refill.test", Rule{RPS: 1000, Burst: 20, Concurrency: 4}, 300, 300, 0, 200) // all wait at once
	if n := s.passes.Load(); n != 300 {
		t.Errorf("%d of 300 requests went within 15s: the gate waited for heartbeats to refill", n)
	}
}
