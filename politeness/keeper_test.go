package politeness

import (
	"context"
	"testing"
	"time"
)

// TestKeeper: a lease a Keeper holds keeps its host's cap taken well past
// LeaseTTL, as a long request must; once dropped it lapses and frees the
// cap. Leases are renewed in one round trip per tick, not one per lease.
func TestKeeper(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			const ttl = 150 * time.Millisecond
			b := newBudget(t, srv.connect(), srv.keys, func(o *Options) { o.LeaseTTL = ttl })
			k := b.NewKeeper(nil)
			done := make(chan error, 1)
			runCtx, stop := context.WithCancel(ctx)
			go func() { done <- k.Run(runCtx) }()
			defer func() { stop(); <-done }()

			rule := Rule{RPS: 1000, Concurrency: 1}
			g, err := b.Acquire(ctx, "keep.test", rule)
			if err != nil || len(g.Leases) != 1 {
				t.Fatalf("Acquire = %+v, %v", g, err)
			}
			k.Hold(g.Leases[0])
			for end := time.Now().Add(6 * ttl); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				other, err := b.Acquire(ctx, "keep.test", rule)
				if err != nil {
					t.Fatal(err)
				}
				if len(other.Leases) != 0 {
					t.Fatalf("a second request was granted %s after the first (LeaseTTL %s) while it was kept", time.Since(g.Leases[0].granted), ttl)
				}
			}
			k.Drop(g.Leases[0])
			if !eventually(10*time.Second, func() bool {
				other, err := b.Acquire(ctx, "keep.test", rule)
				return err == nil && len(other.Leases) == 1
			}) {
				t.Fatal("the dropped lease never lapsed")
			}
		})
	}
}

// TestBudget_RenewMany: leases of several hosts are renewed in one round
// trip; a lapsed one is reported lost.
func TestBudget_RenewMany(t *testing.T) {
	for _, srv := range servers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := srv.connect()
			b := newBudget(t, rdb, srv.keys, func(o *Options) { o.LeaseTTL = 300 * time.Millisecond })
			rule := Rule{RPS: 1000, Burst: 10, Concurrency: 5}
			var leases []*Lease
			for _, h := range []string{"a.test", "a.test", "b.test"} {
				g, err := b.Acquire(ctx, h, rule)
				if err != nil || len(g.Leases) != 1 {
					t.Fatalf("Acquire %s = %+v, %v", h, g, err)
				}
				leases = append(leases, g.Leases[0])
			}
			if err := leases[2].Release(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := b.RenewMany(ctx, leases[:1]); err != nil { // loads the script
				t.Fatal(err)
			}
			var rt roundTrips
			rdb.AddHook(&rt)
			lost, err := b.RenewMany(ctx, leases)
			if err != nil {
				t.Fatal(err)
			}
			if len(lost) != 1 || lost[0] != leases[2] {
				t.Errorf("lost %v, want the released b.test lease alone", lost)
			}
			if n := rt.n.Load(); n != 1 {
				t.Errorf("RenewMany took %d round trips, want 1", n)
			}
		})
	}
}
