package queue

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// bandTask is a task of priority p, its URL ending in name.
func bandTask(name string, p int) string {
	return cluster.Task{URL: "https://example.com/" + name, FP: "fp" + name, Job: "news", Priority: p}.Encode()
}

// pushBand queues tasks name0..name(n-1) of priority p on slave's band.
func pushBand(t *testing.T, rdb redis.UniversalClient, jk cluster.JobKeys, slave int, name string, p, n int) []string {
	t.Helper()
	var tasks []string
	for i := range n {
		tasks = append(tasks, bandTask(name+string(rune('a'+i)), p))
	}
	if err := rdb.RPush(context.Background(), jk.Band(slave, p), anySlice(tasks)...).Err(); err != nil {
		t.Fatal(err)
	}
	return tasks
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// takeURLs takes n tasks and returns the last path segment of each.
func takeNames(t *testing.T, l *SlaveQueue, n int) []string {
	t.Helper()
	ds, err := l.Take(context.Background(), n, time.Minute)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		task, err := cluster.DecodeTask(d.Entry)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = task.URL[strings.LastIndex(task.URL, "/")+1:]
	}
	return out
}

// TestSlaveQueue_Take_bands: a queue kept in bands is taken highest
// priority first, then the next band fills what is left of the take; a
// lower band that keeps being passed over gains one priority per aging
// step of Redis's clock and gets its turn, after which it waits again;
// an empty band forgets its wait.
func TestSlaveQueue_Take_bands(t *testing.T) {
	rdb, keys, clock := testenv.MovedRedis(t)
	jk := keys.Job("news")
	q := New(rdb, jk).WithBands([]int{5, 0, -1}).Slave(0)
	q.SetAging(time.Second)
	pushBand(t, rdb, jk, 0, "lo", 0, 4)
	pushBand(t, rdb, jk, 0, "hi", 5, 3)
	pushBand(t, rdb, jk, 0, "neg", -1, 2)

	if got, want := takeNames(t, q, 2), []string{"hia", "hib"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first take = %v, want %v: the highest band first", got, want)
	}
	if got, want := takeNames(t, q, 3), []string{"hic", "loa", "lob"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("second take = %v, want %v: the next band fills the take", got, want)
	}
	pushBand(t, rdb, jk, 0, "hj", 5, 20)
	// A take a second: band 5 is served each time (5 + 1 after a
	// second), bands 0 and -1 gain one a second from the last take; at 7
	// seconds band 0 passes (7 > 6; at 6 the tie goes to band 5); at 8
	// band 5, not served for two seconds, ties band -1 (5 + 2 = -1 + 8)
	// and goes first; at 9 band -1 (8 > 6).
	want := []string{"hja", "hjb", "hjc", "hjd", "hje", "hjf", "loc", "hjg", "nega"}
	for k, w := range want {
		clock.Advance(time.Second)
		if got := takeNames(t, q, 1); len(got) != 1 || got[0] != w {
			t.Fatalf("take at %ds = %v, want %s", k+1, got, w)
		}
	}
	// Band 0's last task, then band 0 is empty: a minute on, its wait is
	// forgotten, and a task queued there now has waited for nothing.
	for k := 0; k < 7; k++ {
		clock.Advance(time.Second)
		takeNames(t, q, 1)
	}
	if n, err := rdb.LLen(context.Background(), jk.Band(0, 0)).Result(); err != nil || n != 0 {
		t.Fatalf("band 0 holds %d, %v; want it served empty by aging", n, err)
	}
	clock.Advance(time.Minute)
	takeNames(t, q, 1)
	pushBand(t, rdb, jk, 0, "late", 0, 1)
	if got := takeNames(t, q, 1); len(got) != 1 || !strings.HasPrefix(got[0], "hj") {
		t.Fatalf("take = %v, want band 5's: a band that was empty has waited for nothing", got)
	}
}

// TestSlaveQueue_bandsKeepTheirTasks: a task handed back (released,
// requeued, reclaimed), moved to another slave or stolen stays in the
// band of its own priority; depths and items count every band.
func TestSlaveQueue_bandsKeepTheirTasks(t *testing.T) {
	rdb, keys, clock := testenv.MovedRedis(t)
	ctx := context.Background()
	jk := keys.Job("news")
	queues := New(rdb, jk).WithBands([]int{3, 0})
	q0 := queues.Slave(0)
	hi := pushBand(t, rdb, jk, 0, "hi", 3, 2)
	lo := pushBand(t, rdb, jk, 0, "lo", 0, 2)
	bandOf := func(task string) string {
		t.Helper()
		for _, key := range []string{jk.Band(0, 3), jk.Band(0, 0), jk.Band(1, 3), jk.Band(1, 0)} {
			pos, err := rdb.LPos(ctx, key, task, redis.LPosArgs{}).Result()
			if err == nil && pos >= 0 {
				return key
			}
		}
		return ""
	}
	taken := takeNames(t, q0, 4)
	if len(taken) != 4 {
		t.Fatalf("took %v, want all 4", taken)
	}
	if n, err := q0.Release(ctx, []string{hi[0], lo[0]}); err != nil || n != 2 {
		t.Fatalf("Release = %d, %v", n, err)
	}
	if n, err := q0.Requeue(ctx, []string{hi[1]}); err != nil || n != 1 {
		t.Fatalf("Requeue = %d, %v", n, err)
	}
	clock.Advance(2 * time.Minute)
	if n, err := q0.Reclaim(ctx); err != nil || n != 1 {
		t.Fatalf("Reclaim = %d, %v; want lo[1]", n, err)
	}
	for _, tc := range []struct{ task, want string }{{hi[0], jk.Band(0, 3)}, {hi[1], jk.Band(0, 3)},
		{lo[0], jk.Band(0, 0)}, {lo[1], jk.Band(0, 0)}} {
		if got := bandOf(tc.task); got != tc.want {
			t.Errorf("%s handed back to %q, want %q", tc.task, got, tc.want)
		}
	}
	d, err := queues.Depth(ctx, 2)
	if err != nil || d.Queued[0] != 4 {
		t.Fatalf("Depth = %+v, %v; want 4 queued on slave 0", d, err)
	}
	queued, _, err := queues.Items(ctx, 0)
	if err != nil || len(queued) != 4 || bandOf(queued[0]) != jk.Band(0, 3) {
		t.Fatalf("Items = %v, %v; want the 4, band 3 first", queued, err)
	}
	moved, err := queues.MoveQueued(ctx, 0, []Move{{Task: hi[0], To: 1}, {Task: lo[0], To: 1}})
	if err != nil || moved != 2 {
		t.Fatalf("MoveQueued = %d, %v", moved, err)
	}
	if bandOf(hi[0]) != jk.Band(1, 3) || bandOf(lo[0]) != jk.Band(1, 0) {
		t.Errorf("moved to %q and %q, want slave 1's bands 3 and 0", bandOf(hi[0]), bandOf(lo[0]))
	}
	// slave 1 steals band 3 first (what its victim holds of it, half)
	q1 := queues.Slave(1)
	if _, err := rdb.Del(ctx, jk.Band(1, 3), jk.Band(1, 0)).Result(); err != nil {
		t.Fatal(err)
	}
	moved, victim, err := q1.Steal(ctx, []int{0, 1}, 10, 1)
	if err != nil || moved != 1 || victim != 0 || bandOf(hi[1]) != jk.Band(1, 3) {
		t.Fatalf("Steal = %d from %d, %v (hi[1] in %q); want band 3's one task from slave 0", moved, victim, err, bandOf(hi[1]))
	}
}

// TestSlaveQueue_noBands: a queue of a job without priorities keeps one
// list per slave and its take is the one of a queue without bands (no
// served hash is written).
func TestSlaveQueue_noBands(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx := context.Background()
	jk := keys.Job("news")
	q := New(rdb, jk).WithBands([]int{0}).Slave(0)
	pushBand(t, rdb, jk, 0, "a", 0, 2)
	if got := takeNames(t, q, 2); len(got) != 2 {
		t.Fatalf("took %v, want 2", got)
	}
	if n, err := rdb.Exists(ctx, jk.Served(0)).Result(); err != nil || n != 0 {
		t.Fatalf("served hash exists = %d, %v; want none", n, err)
	}
}
