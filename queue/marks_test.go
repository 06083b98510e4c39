package queue

import (
	"context"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestLeased_withoutStartMarks: a leased list without start marks (the
// master's frontier, NewLeased) counts every delivery that ends without
// an outcome, requeued or lapsed, marked or not, and never writes start
// marks or unstarted counts; a release still does not count.
func TestLeased_withoutStartMarks(t *testing.T) {
	const lease = time.Minute
	rdb, keys, clock := testenv.MovedRedis(t)
	ctx := context.Background()
	jk := keys.Job("frontier")
	l := NewLeased(rdb, LeasedKeys{List: jk.Frontier(), Inflight: jk.FrontierActive(), Attempts: jk.ListAttempts()})
	page := "https://example.com/list?page=2"
	if err := rdb.RPush(ctx, jk.Frontier(), page).Err(); err != nil {
		t.Fatal(err)
	}
	takeCounted := func(want int) {
		t.Helper()
		ds, err := l.Take(ctx, 1, lease)
		if err != nil || len(ds) != 1 || ds[0].Count != want {
			t.Fatalf("Take = %+v, %v; want one delivery counted %d", ds, err, want)
		}
	}
	takeCounted(1)
	if n, err := l.Requeue(ctx, []string{page}); err != nil || n != 1 {
		t.Fatalf("Requeue = %d, %v", n, err)
	}
	takeCounted(2)
	clock.Advance(lease)
	if n, err := l.Reclaim(ctx); err != nil || n != 1 {
		t.Fatalf("Reclaim after the lease = %d, %v; want 1", n, err)
	}
	takeCounted(3)
	if n, err := l.Release(ctx, []string{page}); err != nil || n != 1 {
		t.Fatalf("Release = %d, %v", n, err)
	}
	takeCounted(3)
	fields := rdb.HGetAll(ctx, jk.ListAttempts()).Val()
	want := map[string]string{cluster.AttemptCountPrefix + page: "2"}
	if len(fields) != len(want) || fields[cluster.AttemptCountPrefix+page] != "2" {
		t.Errorf("attempts = %v, want only %v (no start marks, no unstarted counts)", fields, want)
	}
}
