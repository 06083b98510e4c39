package politeness

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestReporter: the ends of many requests to several hosts reach Redis in
// one pipelined flush: the leases are given back, a 429 cuts its host's
// rate, a Retry-After pauses its host, and successes count as raises.
func TestReporter(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := srv.connect()
			b := newBudget(t, rdb, srv.keys, nil)
			var leases []*Lease
			for i := 0; i < 3; i++ {
				g, err := b.AcquireMany(ctx, []Want{{Host: fmt.Sprintf("h%d.test", i), Rule: Rule{RPS: 1000, Burst: 10, Concurrency: 10}, N: 5}})
				if err != nil || len(g[0].Leases) != 5 {
					t.Fatalf("acquire: %+v %v", g, err)
				}
				leases = append(leases, g[0].Leases...)
			}
			r := b.NewReporter(time.Hour, 1000, nil) // flushed by hand below
			r.Done(leases[0], http.StatusOK, 0)      // loads the script, as any first flush does
			r.flush(ctx)
			leases = leases[1:]
			trips := &roundTrips{}
			rdb.AddHook(trips)
			for i, l := range leases {
				status, after := http.StatusOK, time.Duration(0)
				if l.Host() == "h1.test" && i%5 == 0 {
					status = http.StatusTooManyRequests
				}
				if l.Host() == "h2.test" && i%5 == 0 {
					status, after = http.StatusServiceUnavailable, 30*time.Second
				}
				r.Done(l, status, after)
			}
			if n := trips.n.Load(); n != 0 {
				t.Fatalf("Done sent %d requests to Redis before the flush", n)
			}
			r.flush(ctx)
			if n := trips.n.Load(); n != 1 {
				t.Errorf("the flush took %d round trips, want 1 pipeline for 3 hosts", n)
			}
			for i, want := range []struct {
				factorBelow1 bool
				paused       bool
			}{{false, false}, {true, false}, {true, true}} {
				st, err := b.State(ctx, fmt.Sprintf("h%d.test", i))
				if err != nil {
					t.Fatal(err)
				}
				if st.InFlight != 0 {
					t.Errorf("h%d: %d leases still in flight after the flush", i, st.InFlight)
				}
				if (st.Factor < 1) != want.factorBelow1 || (st.Paused > 0) != want.paused {
					t.Errorf("h%d: factor %v, paused %v; want cut %v, paused %v", i, st.Factor, st.Paused, want.factorBelow1, want.paused)
				}
			}
		})
	}
}

// TestReporter_stopFlushes: reports pending as the process stops reach
// Redis, even when a flush and the stop come at once (a flush used to run
// on the cancelled context, and the leases it carried were held for
// LeaseTTL after a graceful stop).
func TestReporter_stopFlushes(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	b := newBudget(t, rdb, keys, nil)
	for i := range 20 { // Run picks the kick or the stop at random: each try is a coin toss
		host := fmt.Sprintf("stop%d.test", i)
		g, err := b.Acquire(context.Background(), host, Rule{RPS: 1000, Concurrency: 10})
		if err != nil || len(g.Leases) != 1 {
			t.Fatalf("acquire: %+v %v", g, err)
		}
		r := b.NewReporter(time.Hour, 1000, nil)
		r.Done(g.Leases[0], http.StatusServiceUnavailable, time.Millisecond) // a pause: kicks a flush
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		st, err := b.State(context.Background(), host)
		if err != nil {
			t.Fatal(err)
		}
		if st.InFlight != 0 {
			t.Fatalf("try %d: the lease reported as the reporter stopped is still held", i)
		}
	}
}
