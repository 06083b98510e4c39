package queue

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestLeased_Orphans: Orphans names the entries taken more than the
// margin ago only when the in-flight set holds more entries than the
// holder says it holds; a holder that holds them all pays one ZCARD and
// hears of none, and an entry taken within the margin is never named.
func TestLeased_Orphans(t *testing.T) {
	const lease, margin = time.Minute, time.Second
	rdb, keys, clock := testenv.MovedRedis(t)
	ctx := context.Background()
	jk := keys.Job("orphans")
	l := NewLeased(rdb, LeasedKeys{List: jk.Queue(0), Inflight: jk.Inflight(0), Attempts: jk.TaskAttempts()})
	if err := rdb.RPush(ctx, jk.Queue(0), "a", "b", "c", "d").Err(); err != nil {
		t.Fatal(err)
	}
	if ds, err := l.Take(ctx, 3, lease); err != nil || len(ds) != 3 {
		t.Fatalf("Take = %v, %v; want 3", ds, err)
	}
	orphans := func(held int) []string {
		t.Helper()
		got, err := l.Orphans(ctx, held, lease-margin)
		if err != nil {
			t.Fatalf("Orphans(%d): %v", held, err)
		}
		slices.Sort(got)
		return got
	}
	if got := orphans(2); len(got) != 0 {
		t.Errorf("just taken: Orphans = %v, want none (taken within the margin)", got)
	}
	clock.Advance(2 * margin)
	if ds, err := l.Take(ctx, 1, lease); err != nil || len(ds) != 1 {
		t.Fatalf("Take = %v, %v; want 1", ds, err)
	}
	if got := orphans(4); len(got) != 0 {
		t.Errorf("all four held: Orphans = %v, want none", got)
	}
	if got, want := orphans(3), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("three held of four: Orphans = %v, want %v (not d, taken within the margin)", got, want)
	}
}
