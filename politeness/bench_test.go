package politeness

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// BenchmarkAcquire measures grants per second and Redis round trips per
// grant, asking one host at a time (Acquire) and many hosts per call
// (AcquireMany), against the test Redis:
//
//	go test -run='^$' -bench=. -benchtime=3s ./politeness/
//
// Leases are given back with Done, one round trip each, as a worker does
// when its request ends. "grants/s" and "rt/grant" count acquiring only;
// "requests/s" and "rt/request" count acquiring and Done.
func BenchmarkAcquire(b *testing.B) {
	rule := Rule{RPS: MaxRPS, Burst: 1000, Concurrency: 100000}
	for _, tc := range []struct {
		hosts, n int
	}{{1, 1}, {5, 6}, {50, 8}} {
		b.Run(fmt.Sprintf("hosts=%d/want=%d", tc.hosts, tc.n), func(b *testing.B) {
			rdb, keys := testenv.Redis(b)
			var rt roundTrips
			rdb.AddHook(&rt)
			budget := newBudget(b, rdb, keys, nil)
			ctx := context.Background()
			wants := make([]Want, tc.hosts)
			for i := range wants {
				wants[i] = Want{Host: fmt.Sprintf("h%d.test", i), Rule: rule, N: tc.n}
			}
			var grants, acquireRT, doneRT int64
			var acquiring time.Duration
			start := time.Now()
			for b.Loop() {
				before, t0 := rt.n.Load(), time.Now()
				gs, err := budget.AcquireMany(ctx, wants)
				if err != nil {
					b.Fatal(err)
				}
				acquiring += time.Since(t0)
				acquireRT += rt.n.Load() - before
				before = rt.n.Load()
				for _, g := range gs {
					grants += int64(len(g.Leases))
					for _, l := range g.Leases {
						if err := l.Done(ctx, 200, 0); err != nil {
							b.Fatal(err)
						}
					}
				}
				doneRT += rt.n.Load() - before
			}
			if grants == 0 {
				b.Fatal("no grants")
			}
			b.ReportMetric(float64(grants)/time.Since(start).Seconds(), "requests/s")
			b.ReportMetric(float64(grants)/acquiring.Seconds(), "grants/s")
			b.ReportMetric(float64(acquireRT)/float64(grants), "rt/grant")
			b.ReportMetric(float64(acquireRT+doneRT)/float64(grants), "rt/request")
		})
	}
}
