package politeness

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

func startQueue[T any](t *testing.T, b *Budget) *Queue[T] {
	t.Helper()
	q := NewQueue[T](b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return q
}

// TestQueue_Batches: six idle workers and 30 tasks across 5 hosts: one
// round trip hands each worker a task, shared across the hosts; then every
// task is handed out exactly once.
func TestQueue_Batches(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	var rt roundTrips
	rdb.AddHook(&rt)
	b := newBudget(t, rdb, keys, nil)
	rule := Rule{RPS: 1000, Burst: 10, Concurrency: 10}
	if _, err := b.Acquire(context.Background(), "warm.test", rule); err != nil { // loads the script
		t.Fatal(err)
	}
	q := NewQueue[string](b, nil)
	for i := range 30 {
		q.Push(fmt.Sprintf("h%d.test", i%5), rule, fmt.Sprint(i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	got := map[string]int{}
	hosts := map[string]bool{}
	first := make(chan struct{}) // closed once all six hold their first task
	var held sync.WaitGroup
	held.Add(6)
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := 0; ; i++ {
				r, err := q.Next(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				got[r.Item]++
				hosts[r.Lease.Host()] = true
				n := len(got)
				mu.Unlock()
				if i == 0 {
					held.Done()
					<-first
				}
				if err := r.Lease.Done(ctx, 200, 0); err != nil {
					t.Errorf("worker %d: Done: %v", w, err)
				}
				if n == 30 {
					cancel()
				}
			}
		})
	}
	if !eventually(5*time.Second, func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.waiters) == 6 }) {
		t.Fatal("workers never waited")
	}
	before := rt.pipelines()
	run := make(chan error, 1)
	go func() { run <- q.Run(ctx) }()
	held.Wait()
	mu.Lock()
	if n := rt.pipelines() - before; n != 1 || len(hosts) != 5 {
		t.Errorf("first six tasks: %d round trips, %d hosts; want 1 round trip across all 5 hosts", n, len(hosts))
	}
	mu.Unlock()
	close(first)
	wg.Wait()
	if err := <-run; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(got) != 30 {
		t.Fatalf("%d distinct tasks handed out, want 30", len(got))
	}
	for item, n := range got {
		if n != 1 {
			t.Errorf("task %s handed out %d times", item, n)
		}
	}
	t.Logf("%d acquire round trips for 30 tasks", rt.pipelines()-before)
}

// TestQueue_BusyHostDoesNotHoldWorkers: while one host is full and another
// paused, workers get the third host's tasks; the held-up tasks wait in
// the queue, not in a worker.
func TestQueue_BusyHostDoesNotHoldWorkers(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	b := newBudget(t, rdb, keys, nil)
	ctx := context.Background()
	full := Rule{RPS: 1000, Concurrency: 1}
	if g, err := b.Acquire(ctx, "full.test", full); err != nil || len(g.Leases) != 1 {
		t.Fatalf("Acquire = %+v, %v", g, err)
	}
	if err := b.Pause(ctx, "paused.test", time.Hour); err != nil {
		t.Fatal(err)
	}
	q := startQueue[string](t, b)
	for i := range 3 {
		q.Push("full.test", full, "full")
		q.Push("paused.test", Rule{RPS: 1000}, "paused")
		q.Push("open.test", Rule{RPS: 1000, Burst: 10}, fmt.Sprint("open", i))
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for range 3 {
		r, err := q.Next(wctx)
		if err != nil {
			t.Fatalf("Next: %v (queued: %d)", err, q.Len())
		}
		if r.Lease.Host() != "open.test" {
			t.Errorf("got a task for %s, want open.test", r.Lease.Host())
		}
		_ = r.Lease.Release(ctx)
	}
	if n := q.Len(); n != 6 {
		t.Errorf("%d tasks still queued, want the 6 of the full and paused hosts", n)
	}
	short, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	if r, err := q.Next(short); err == nil {
		t.Errorf("Next handed out %q of %s while its host is full or paused", r.Item, r.Lease.Host())
	}
	if n := q.Len(); n != 6 {
		t.Errorf("after a worker gave up: %d queued, want 6", n)
	}
}

// pipelines counts AcquireMany calls: they are the client's only pipelines
// (Done and Release are single commands).
func (r *roundTrips) pipelines() int64 { return r.p.Load() }

// TestQueue_Parked: items of a paused host, and a held-back host's items
// beyond its cap, count as parked; a free host's do not.
func TestQueue_Parked(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	b := newBudget(t, rdb, keys, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Pause(ctx, "paused.test", time.Hour); err != nil {
		t.Fatal(err)
	}
	q := startQueue[string](t, b)
	for i := range 5 {
		q.Push("paused.test", Rule{RPS: 1000}, fmt.Sprint("p", i))
		q.Push("busy.test", Rule{RPS: 1000, Concurrency: 2}, fmt.Sprint("b", i))
	}
	q.Push("free.test", Rule{RPS: 1000}, "f")
	if n := q.Parked(time.Second); n != 0 {
		t.Errorf("Parked before any host was asked = %d, want 0", n)
	}
	go func() { // a worker that takes everything it is given and keeps its leases
		for ctx.Err() == nil {
			_, _ = q.Next(ctx)
		}
	}()
	// paused.test: all 5; busy.test: 2 granted, 3 left, 1 beyond its cap.
	if !eventually(10*time.Second, func() bool { return q.Len() == 8 && q.Parked(time.Second) == 6 }) {
		t.Errorf("Len %d, Parked %d; want 8 waiting, 6 parked", q.Len(), q.Parked(time.Second))
	}
}

// TestQueue_Remove: Remove takes the matching items out of one host's
// queue, in order, and leaves the rest to be handed out.
func TestQueue_Remove(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	q := NewQueue[int](newBudget(t, rdb, keys, nil), nil)
	for i := range 6 {
		q.Push("Host.test", Rule{RPS: 1000}, i)
	}
	q.Push("other.test", Rule{RPS: 1000}, 100)
	got := q.Remove("host.test", func(i int) bool { return i%2 == 0 })
	if fmt.Sprint(got) != "[0 2 4]" || q.Len() != 4 {
		t.Errorf("Remove = %v with %d left, want [0 2 4] with 4", got, q.Len())
	}
	if got := q.Remove("nobody.test", func(int) bool { return true }); got != nil {
		t.Errorf("Remove on an unknown host = %v", got)
	}
}
