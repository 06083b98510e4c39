package queue

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/ledger"
)

type fixture struct {
	ctx   context.Context
	rdb   *redis.Client
	jk    cluster.JobKeys
	q     *Queue
	tasks []string
}

// newFixture puts n tasks on slave's queue of a fresh job.
func newFixture(t *testing.T, slave, n int) *fixture {
	t.Helper()
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	f := &fixture{ctx: ctx, rdb: rdb, jk: keys.Job("news"), q: New(rdb, keys.Job("news"))}
	f.tasks = f.push(t, slave, "", n)
	return f
}

// push appends n new tasks to slave's queue and returns their wire forms.
func (f *fixture) push(t *testing.T, slave int, tag string, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, cluster.Task{URL: fmt.Sprintf("https://example.com/%s%d", tag, i), FP: fmt.Sprintf("fp%s%d", tag, i), Job: "news"}.Encode())
	}
	if n > 0 {
		args := make([]any, len(out))
		for i, s := range out {
			args[i] = s
		}
		if err := f.rdb.RPush(f.ctx, f.jk.Queue(slave), args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func (f *fixture) redisNowMs(t *testing.T) int64 {
	t.Helper()
	now, err := f.rdb.Time(f.ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMilli()
}

func (f *fixture) stats(t *testing.T) map[string]string {
	t.Helper()
	m, err := f.rdb.HGetAll(f.ctx, f.jk.Stats()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (f *fixture) items(t *testing.T, slave int) (queued, inflight []string) {
	t.Helper()
	queued, inflight, err := f.q.Items(f.ctx, slave)
	if err != nil {
		t.Fatalf("Items: %v", err)
	}
	return queued, inflight
}

func take(t *testing.T, l *SlaveQueue, ctx context.Context, n int, lease time.Duration) []string {
	t.Helper()
	got, err := l.Take(ctx, n, lease)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	return Entries(got)
}

func TestLeased_Take(t *testing.T) {
	f := newFixture(t, 2, 5)
	l := f.q.Slave(2)
	const lease = 30 * time.Second
	got := take(t, l, f.ctx, 3, lease)
	if !reflect.DeepEqual(got, f.tasks[:3]) {
		t.Fatalf("Take(3) = %q, want the first three %q", got, f.tasks[:3])
	}
	now := f.redisNowMs(t)
	for _, task := range got {
		score, err := f.rdb.ZScore(f.ctx, f.jk.Inflight(2), task).Result()
		if err != nil {
			t.Fatalf("ZSCORE %s: %v", task, err)
		}
		if left := int64(score) - now; left > lease.Milliseconds() || left < lease.Milliseconds()-2000 {
			t.Errorf("lease deadline is %d ms from now, want about %d", left, lease.Milliseconds())
		}
	}
	queued, inflight := f.items(t, 2)
	sort.Strings(inflight)
	want := append([]string(nil), f.tasks[:3]...)
	sort.Strings(want)
	if !reflect.DeepEqual(queued, f.tasks[3:]) || !reflect.DeepEqual(inflight, want) {
		t.Errorf("after Take: queued %q, in flight %q; want %q, %q", queued, inflight, f.tasks[3:], want)
	}
	if rest := take(t, l, f.ctx, 10, lease); !reflect.DeepEqual(rest, f.tasks[3:]) {
		t.Errorf("Take(10) = %q, want the remaining %q", rest, f.tasks[3:])
	}
	if none := take(t, l, f.ctx, 10, lease); len(none) != 0 {
		t.Errorf("Take on an empty queue = %q, want none", none)
	}
	if other := take(t, f.q.Slave(3), f.ctx, 10, lease); len(other) != 0 {
		t.Errorf("slave 3 took %q from slave 2's queue", other)
	}
}

func TestLeased_Ack(t *testing.T) {
	f := newFixture(t, 1, 4)
	l := f.q.Slave(1)
	got := take(t, l, f.ctx, 4, time.Minute)
	outcomes := []ledger.Outcome{
		{Task: got[0]},
		{Task: got[1], NearDuplicate: true, Retries: 2},
		{Task: got[2], Failed: true, Retries: 3},
		{Task: got[3]},
	}
	n, err := l.Ack(f.ctx, outcomes)
	if err != nil || n != 4 {
		t.Fatalf("Ack = %d, %v; want 4", n, err)
	}
	want := map[string]string{"stored": "3", "stored:1": "3", "failed": "1", "failed:1": "1", "near_duplicates": "1", "retries": "5"}
	if got := f.stats(t); !reflect.DeepEqual(got, want) {
		t.Errorf("stats = %v, want %v", got, want)
	}
	t.Run("acking again counts nothing", func(t *testing.T) {
		n, err := l.Ack(f.ctx, outcomes)
		if err != nil || n != 0 {
			t.Errorf("second Ack = %d, %v; want 0", n, err)
		}
		if got := f.stats(t); !reflect.DeepEqual(got, want) {
			t.Errorf("stats after second Ack = %v, want unchanged %v", got, want)
		}
	})
	t.Run("in flight set emptied", func(t *testing.T) {
		if _, inflight := f.items(t, 1); len(inflight) != 0 {
			t.Errorf("in flight after Ack = %q, want none", inflight)
		}
	})
	t.Run("a task never taken is not counted", func(t *testing.T) {
		n, err := l.Ack(f.ctx, []ledger.Outcome{{Task: "never taken"}})
		if err != nil || n != 0 {
			t.Errorf("Ack(never taken) = %d, %v; want 0", n, err)
		}
	})
	t.Run("a retried task moves from failed to stored once", func(t *testing.T) {
		g := newFixture(t, 1, 3)
		l := g.q.Slave(1)
		got := take(t, l, g.ctx, 3, time.Minute)
		// Two pages failed earlier and were re-enqueued; the third was not.
		g.rdb.HSet(g.ctx, g.jk.Stats(), "failed", 2)
		g.rdb.SAdd(g.ctx, g.jk.Retrying(), "fp-a", "fp-b")
		outs := []ledger.Outcome{
			{Task: got[0], Retried: true, FP: "fp-a"},               // stored this time
			{Task: got[1], Retried: true, FP: "fp-b", Failed: true}, // failed again
			{Task: got[2], Retried: true, FP: "fp-c"},               // not in the retrying set
		}
		n, err := l.Ack(g.ctx, outs)
		if err != nil || n != 2 {
			t.Fatalf("Ack = %d, %v; want 2", n, err)
		}
		want := map[string]string{"stored": "1", "stored:1": "1", "failed": "1", "recovered": "1"}
		if got := g.stats(t); !reflect.DeepEqual(got, want) {
			t.Errorf("stats = %v, want %v", got, want)
		}
		if left := g.rdb.SCard(g.ctx, g.jk.Retrying()).Val(); left != 0 {
			t.Errorf("%d fingerprints left in the retrying set, want 0", left)
		}
	})
	t.Run("nothing to ack", func(t *testing.T) {
		if n, err := l.Ack(f.ctx, nil); n != 0 || err != nil {
			t.Errorf("Ack(nil) = %d, %v; want 0, nil", n, err)
		}
	})
}

func TestLeased_Reclaim(t *testing.T) {
	f := newFixture(t, 0, 3)
	l := f.q.Slave(0)
	lapsed := take(t, l, f.ctx, 1, 50*time.Millisecond)
	if len(lapsed) != 1 {
		t.Fatalf("Take = %q, want one task", lapsed)
	}
	kept := take(t, l, f.ctx, 1, time.Minute)
	testenv.Eventually(t, 5*time.Second, "the lapsed lease is reclaimed", func() bool {
		n, err := l.Reclaim(f.ctx)
		if err != nil {
			t.Fatalf("Reclaim: %v", err)
		}
		if n > 1 {
			t.Fatalf("Reclaim moved %d tasks, want only the lapsed one", n)
		}
		return n == 1
	})
	queued, inflight := f.items(t, 0)
	if want := []string{lapsed[0], f.tasks[2]}; !reflect.DeepEqual(queued, want) {
		t.Errorf("queue after Reclaim = %q, want the reclaimed task at the head: %q", queued, want)
	}
	if !reflect.DeepEqual(inflight, kept) {
		t.Errorf("in flight after Reclaim = %q, want only the task with a live lease %q", inflight, kept)
	}

	// The old holder wakes up and acknowledges: not counted.
	if n, err := l.Ack(f.ctx, []ledger.Outcome{{Task: lapsed[0]}}); err != nil || n != 0 {
		t.Errorf("late Ack = %d, %v; want 0", n, err)
	}
	if got := f.stats(t); len(got) != 0 {
		t.Errorf("stats after late Ack = %v, want none", got)
	}
	// The task is delivered again, and its new holder's Ack counts once.
	again := take(t, l, f.ctx, 1, time.Minute)
	if !reflect.DeepEqual(again, lapsed) {
		t.Fatalf("next Take = %q, want the reclaimed task %q", again, lapsed)
	}
	if n, err := l.Ack(f.ctx, []ledger.Outcome{{Task: again[0]}}); err != nil || n != 1 {
		t.Errorf("Ack by the new holder = %d, %v; want 1", n, err)
	}
	if n, err := l.Ack(f.ctx, []ledger.Outcome{{Task: again[0]}}); err != nil || n != 0 {
		t.Errorf("repeated Ack = %d, %v; want 0", n, err)
	}
	if got, want := f.stats(t), map[string]string{"stored": "1", "stored:0": "1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("stats = %v, want %v", got, want)
	}
}

func TestLeased_Renew(t *testing.T) {
	f := newFixture(t, 0, 2)
	l := f.q.Slave(0)
	got := take(t, l, f.ctx, 2, 100*time.Millisecond)
	renewed, lapsing := got[0], got[1]
	if err := l.Renew(f.ctx, []string{renewed, "not in flight"}, time.Minute); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	now := f.redisNowMs(t)
	score, err := f.rdb.ZScore(f.ctx, f.jk.Inflight(0), renewed).Result()
	if err != nil {
		t.Fatal(err)
	}
	if left := int64(score) - now; left > 60000 || left < 58000 {
		t.Errorf("renewed deadline is %d ms away, want about 60000", left)
	}
	testenv.Eventually(t, 5*time.Second, "the unrenewed task is reclaimed", func() bool {
		n, err := l.Reclaim(f.ctx)
		if err != nil {
			t.Fatalf("Reclaim: %v", err)
		}
		return n == 1
	})
	queued, inflight := f.items(t, 0)
	if !reflect.DeepEqual(queued, []string{lapsing}) || !reflect.DeepEqual(inflight, []string{renewed}) {
		t.Errorf("queued %q, in flight %q; want %q, %q", queued, inflight, lapsing, renewed)
	}
	if n, _ := f.rdb.ZCard(f.ctx, f.jk.Inflight(0)).Result(); n != 1 {
		t.Errorf("in flight holds %d entries, want 1: Renew must not add tasks that are not in flight", n)
	}
	if err := l.Renew(f.ctx, nil, time.Minute); err != nil {
		t.Errorf("Renew(nil) = %v", err)
	}
}

func TestLeased_Release(t *testing.T) {
	f := newFixture(t, 4, 4)
	l := f.q.Slave(4)
	got := take(t, l, f.ctx, 3, time.Minute)
	if _, err := l.Ack(f.ctx, []ledger.Outcome{{Task: got[2]}}); err != nil {
		t.Fatal(err)
	}
	n, err := l.Release(f.ctx, []string{got[0], got[1], got[2]})
	if err != nil || n != 2 {
		t.Fatalf("Release = %d, %v; want 2 (the acked task is gone)", n, err)
	}
	queued, inflight := f.items(t, 4)
	if len(inflight) != 0 {
		t.Errorf("in flight after Release = %q, want none", inflight)
	}
	// Released tasks go back to the head, ahead of the untaken one.
	if len(queued) != 3 || queued[2] != f.tasks[3] || !sameSet(queued[:2], got[:2]) {
		t.Errorf("queue after Release = %q, want %q (any order) then %q", queued, got[:2], f.tasks[3])
	}
	if n, err := l.Release(f.ctx, nil); n != 0 || err != nil {
		t.Errorf("Release(nil) = %d, %v; want 0, nil", n, err)
	}
}

func sameSet(a, b []string) bool {
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	return reflect.DeepEqual(a, b)
}

func TestQueue_Depth(t *testing.T) {
	f := newFixture(t, 0, 5)
	f.push(t, 2, "b", 3)
	if _, err := f.q.Slave(0).Take(f.ctx, 2, time.Minute); err != nil {
		t.Fatal(err)
	}
	d, err := f.q.Depth(f.ctx, 3)
	if err != nil {
		t.Fatalf("Depth: %v", err)
	}
	if want := (Depth{Queued: []int64{3, 0, 3}, Inflight: []int64{2, 0, 0}}); !reflect.DeepEqual(d, want) {
		t.Errorf("Depth = %+v, want %+v", d, want)
	}
	if q, i := d.Total(); q != 6 || i != 2 {
		t.Errorf("Total = %d, %d; want 6, 2", q, i)
	}
	queued, inflight := f.items(t, 2)
	if len(queued) != 3 || len(inflight) != 0 {
		t.Errorf("Items(2) = %d queued, %d in flight; want 3, 0", len(queued), len(inflight))
	}
	for _, raw := range queued {
		if _, err := cluster.DecodeTask(raw); err != nil {
			t.Errorf("queued item %q: %v", raw, err)
		}
	}
	if d, err := f.q.Depth(f.ctx, 0); err != nil || len(d.Queued) != 0 {
		t.Errorf("Depth(0) = %+v, %v; want empty", d, err)
	}
}

func TestLeased_Take_concurrent(t *testing.T) {
	const tasks, workers = 1000, 8
	f := newFixture(t, 0, tasks)
	l := f.q.Slave(0)
	var mu sync.Mutex
	taken := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := l.Take(f.ctx, 7, time.Minute)
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, g := range got {
					taken[g.Entry]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Take: %v", err)
	}
	if len(taken) != tasks {
		t.Errorf("%d distinct tasks taken, want %d", len(taken), tasks)
	}
	for _, task := range f.tasks {
		if taken[task] != 1 {
			t.Errorf("task %s taken %d times, want 1", task, taken[task])
		}
	}
	if d, _ := f.q.Depth(f.ctx, 1); d.Queued[0] != 0 || d.Inflight[0] != tasks {
		t.Errorf("Depth = %+v, want 0 queued, %d in flight", d, tasks)
	}
}

// TestSlaveQueue_Steal: a slave whose queue ran dry takes half of the
// longest other queue, from its tail and in order, at most as many as it
// asks for, and nothing from a queue shorter than the least it names; the
// stolen tasks are then taken as first deliveries.
func TestSlaveQueue_Steal(t *testing.T) {
	f := newFixture(t, 1, 100)
	short := f.push(t, 2, "short", 10)
	thief := f.q.Slave(0)
	moved, victim, err := thief.Steal(f.ctx, []int{0, 1, 2, 3}, 64, 20)
	if err != nil || moved != 50 || victim != 1 {
		t.Fatalf("steal = %d from %d, %v; want 50 from slave 1", moved, victim, err)
	}
	assertQueue(t, f, 0, f.tasks[50:])
	assertQueue(t, f, 1, f.tasks[:50])
	assertQueue(t, f, 2, short)

	moved, victim, err = thief.Steal(f.ctx, []int{1, 2}, 10, 20)
	if err != nil || moved != 10 || victim != 1 {
		t.Fatalf("second steal = %d from %d, %v; want 10 from slave 1", moved, victim, err)
	}
	assertQueue(t, f, 0, append(append([]string{}, f.tasks[50:]...), f.tasks[40:50]...))

	if moved, victim, err = f.q.Slave(3).Steal(f.ctx, []int{1, 2}, 64, 41); err != nil || moved != 0 || victim != -1 {
		t.Errorf("steal from queues under the least = %d from %d, %v; want none", moved, victim, err)
	}
	if moved, _, err = thief.Steal(f.ctx, []int{0}, 64, 1); err != nil || moved != 0 {
		t.Errorf("steal with no other slave = %d, %v; want none", moved, err)
	}

	ds, err := thief.Take(f.ctx, 100, time.Minute)
	if err != nil || len(ds) != 60 {
		t.Fatalf("take after the steals = %d, %v; want the 60 stolen", len(ds), err)
	}
	for _, d := range ds {
		if d.Count != 1 {
			t.Fatalf("stolen task taken as delivery %d, want 1: %s", d.Count, d.Entry)
		}
	}
}

// TestSlaveQueue_StealMany: a steal of more tasks than one unpack takes
// (about 8,000) moves them all, in order. Pushed at once, they failed the
// script after its RPOP, which Redis keeps: every one of them was lost.
func TestSlaveQueue_StealMany(t *testing.T) {
	f := newFixture(t, 5, 20000)
	moved, victim, err := f.q.Slave(6).Steal(f.ctx, []int{5}, 20000, 1)
	if err != nil || moved != 10000 || victim != 5 {
		t.Fatalf("steal = %d from %d, %v; want 10000 from slave 5", moved, victim, err)
	}
	assertQueue(t, f, 6, f.tasks[10000:])
	assertQueue(t, f, 5, f.tasks[:10000])
}

// assertQueue checks slave's queued tasks, in order.
func assertQueue(t *testing.T, f *fixture, slave int, want []string) {
	t.Helper()
	got, err := f.rdb.LRange(f.ctx, f.jk.Queue(slave), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("slave %d's queue holds %d tasks, want %d, in order (first %.60q)", slave, len(got), len(want), got)
	}
}
