package queue

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestLeased_leaseOnAMovedClock: a task taken under a lease stays in flight
// until the server's clock passes the lease (or a renewal's), then Reclaim
// hands it back and the next Take delivers it again as its second
// delivery. The clock is moved, not waited for.
func TestLeased_leaseOnAMovedClock(t *testing.T) {
	const lease = time.Minute
	for _, tc := range []struct {
		name    string
		renewAt time.Duration // 0: never renewed
		checks  []time.Duration
		want    []int // tasks Reclaim hands back at each check
	}{
		{"lapses after its lease", 0, []time.Duration{lease - time.Millisecond, 2 * time.Millisecond}, []int{0, 1}},
		{"exactly at the deadline it is lapsed", 0, []time.Duration{lease}, []int{1}},
		{"a renewal moves the deadline", lease / 2, []time.Duration{lease, lease/2 - time.Millisecond, time.Millisecond}, []int{0, 0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb, keys, clock := testenv.MovedRedis(t)
			ctx := context.Background()
			jk := keys.Job("news")
			task := cluster.Task{URL: "https://example.com/a", FP: "fpa", Job: "news"}.Encode()
			if err := rdb.RPush(ctx, jk.Queue(0), task).Err(); err != nil {
				t.Fatal(err)
			}
			l := New(rdb, jk).Slave(0)
			first, err := l.Take(ctx, 1, lease)
			if err != nil || len(first) != 1 || first[0].Count != 1 {
				t.Fatalf("Take = %+v, %v; want the task's first delivery", first, err)
			}
			markStarted(t, &fixture{ctx: ctx}, l, task)
			var elapsed time.Duration
			for i, step := range tc.checks {
				if tc.renewAt > 0 && elapsed < tc.renewAt && elapsed+step >= tc.renewAt {
					clock.Advance(tc.renewAt - elapsed)
					if err := l.Renew(ctx, []string{task}, lease); err != nil {
						t.Fatalf("Renew: %v", err)
					}
					step -= tc.renewAt - elapsed
					elapsed = tc.renewAt
				}
				clock.Advance(step)
				elapsed += step
				n, err := l.Reclaim(ctx)
				if err != nil || n != tc.want[i] {
					t.Fatalf("at +%s Reclaim = %d, %v; want %d", elapsed, n, err, tc.want[i])
				}
			}
			again, err := l.Take(ctx, 1, lease)
			want := []Delivery{{Entry: task, Count: 2}}
			if err != nil || !reflect.DeepEqual(again, want) {
				t.Errorf("Take after the lease lapsed = %+v, %v; want %+v", again, err, want)
			}
		})
	}
}
