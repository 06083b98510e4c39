package politeness

import (
	"context"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// syncStep is one call of the sync script on a moved clock: the clock is
// advanced first, then a process asks for rate tokens, telling what the
// host answered since its last call.
type syncStep struct {
	advance time.Duration
	ask     int
	pauseMS int64 // a 429's Retry-After, as Done reports it
	// The script's answer: tokens granted, when asking again may grant
	// more (ms), and how long the host stays paused (ms).
	tokens, waitMS, pausedMS int64
}

// TestSync_rateAndPauseOnAMovedClock: the GCRA grants a burst, then one
// token per interval, exactly when the server's clock reaches it; a
// Retry-After pause holds every token back until the clock passes it.
// The clock is moved, not waited for.
func TestSync_rateAndPauseOnAMovedClock(t *testing.T) {
	const interval = 1000 // ms between requests at full rate
	const burst = 2
	for _, tc := range []struct {
		name  string
		steps []syncStep
	}{
		{"a burst, then one token an interval", []syncStep{
			{ask: 5, tokens: 2, waitMS: 1000},
			{advance: 999 * time.Millisecond, ask: 1, tokens: 0, waitMS: 1},
			{advance: time.Millisecond, ask: 1, tokens: 1, waitMS: 0},
			{ask: 1, tokens: 0, waitMS: 1000},
			{advance: time.Minute, ask: 5, tokens: 2, waitMS: 1000},
		}},
		{"a Retry-After pause ends on time", []syncStep{
			{ask: 1, pauseMS: 1500, tokens: 0, waitMS: 1500, pausedMS: 1500},
			{advance: 1499 * time.Millisecond, ask: 1, tokens: 0, waitMS: 1, pausedMS: 1},
			{advance: time.Millisecond, ask: 1, tokens: 1, waitMS: 0},
		}},
		{"a later, shorter pause does not shorten it", []syncStep{
			{pauseMS: 3000, waitMS: 3000, pausedMS: 3000},
			{advance: time.Second, pauseMS: 500, ask: 1, waitMS: 2000, pausedMS: 2000},
			{advance: 2 * time.Second, ask: 1, tokens: 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb, keys, clock := testenv.MovedRedis(t)
			opts := DefaultOptions()
			opts.Keys = keys
			b, err := New(rdb, opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for i, s := range tc.steps {
				clock.Advance(s.advance)
				thr := 0
				if s.pauseMS > 0 {
					thr = 1
				}
				// holder, keep -1 (tokens only), want, ask, interval, burst,
				// cap, lease, state ttl, ok, throttled, pause, 503 pause, and
				// a backoff that never cuts (at least 1000 throttled answers).
				res, err := syncScript.Run(ctx, rdb, b.hostKeys("clock.test"), "p1", -1, 0, s.ask,
					interval, burst, 4, 10000, 60000, 0, thr, s.pauseMS, 0,
					0.5, 0.01, 0.1, 1000, 10000, 1000, 0.5).Slice()
				if err != nil {
					t.Fatalf("step %d: sync: %v", i, err)
				}
				tokens, wait, paused := toInt64(res[3]), toInt64(res[4]), toInt64(res[5])
				if tokens != s.tokens || wait != s.waitMS || paused != s.pausedMS {
					t.Errorf("step %d (+%s): tokens %d, wait %d ms, paused %d ms; want %d, %d, %d",
						i, s.advance, tokens, wait, paused, s.tokens, s.waitMS, s.pausedMS)
				}
			}
			if st, err := b.State(ctx, "clock.test"); err != nil || st.Paused != 0 {
				t.Errorf("State at the end = %+v, %v; want no pause", st, err)
			}
		})
	}
}
