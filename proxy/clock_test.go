package proxy

import (
	"errors"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestPool_banEndsOnAMovedClock: a proxy banned by a host is not picked
// for it until the ban ends, and is picked for other hosts meanwhile; a
// timeout cools it down for every host. Each ends exactly when the
// server's clock reaches it; the clock is moved, not waited for.
func TestPool_banEndsOnAMovedClock(t *testing.T) {
	for _, tc := range []struct {
		name      string
		outcome   Outcome
		off       time.Duration // how long host A cannot use the proxy
		otherHost bool          // whether host B can meanwhile
	}{
		{"a ban for as long as the host said", Outcome{Kind: KindBanned, BanFor: 90 * time.Second}, 90 * time.Second, true},
		{"a ban for the pool's default", Outcome{Kind: KindBanned}, DefaultPoolOptions().Ban, true},
		{"a timeout's cooldown", Timeout(), DefaultPoolOptions().Cooldown, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb, keys, clock := testenv.MovedRedis(t)
			ctx := ctxT(t)
			seeded := seedPool(t, rdb, keys, 1, 1, nil)
			pool := newPool(t, rdb, keys, nil)
			hostA, hostB := mustURL(t, "http://a.example/x"), mustURL(t, "http://b.example/x")
			picked, err := pool.Pick(ctx, hostA, nil)
			if err != nil || picked.ID() != seeded[0].ID() {
				t.Fatalf("Pick = %v, %v; want the only proxy", picked.ID(), err)
			}
			if err := pool.Report(ctx, picked, tc.outcome); err != nil {
				t.Fatal(err)
			}
			// pick reports whether a request to u gets the proxy, and frees
			// the slot again.
			pick := func(u string) bool {
				t.Helper()
				p, err := pool.Pick(ctx, mustURL(t, u), nil)
				if errors.Is(err, ErrUnavailable) {
					return false
				}
				if err != nil {
					t.Fatalf("Pick %s: %v", u, err)
				}
				if err := pool.Report(ctx, p, Outcome{Kind: KindTargetFault}); err != nil {
					t.Fatal(err)
				}
				return true
			}
			if pick(hostA.String()) {
				t.Errorf("picked for host A right after the outcome")
			}
			if got := pick(hostB.String()); got != tc.otherHost {
				t.Errorf("picked for host B meanwhile = %v, want %v", got, tc.otherHost)
			}
			clock.Advance(tc.off - time.Millisecond)
			if pick(hostA.String()) {
				t.Errorf("picked for host A a millisecond before the end")
			}
			clock.Advance(time.Millisecond)
			if !pick(hostA.String()) {
				t.Errorf("not picked for host A once it ended")
			}
		})
	}
}
