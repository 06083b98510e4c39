package membership

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// runKeepAlive starts KeepAlive for node id in the background and returns
// a stop function that cancels it and returns its result.
func runKeepAlive(t *testing.T, r *Registry, id int, token string) (done <-chan error, stop func() error) {
	t.Helper()
	c, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- r.KeepAlive(c, node(id, token)) }()
	t.Cleanup(cancel)
	return errc, func() error { cancel(); return <-errc }
}

func TestRegistry_KeepAlive(t *testing.T) {
	t.Run("renews until cancelled then leaves", func(t *testing.T) {
		r, rdb, keys := newRegistry(t, Options{})
		_, stop := runKeepAlive(t, r, 7, "run1")
		testenv.Eventually(t, time.Second, "slave 7 registers", func() bool { return slices.Equal(ids(snapshot(t, r)), []int{7}) })
		first := rdb.ZScore(ctx(t), keys.Nodes().Leases(), "7").Val()
		testenv.Eventually(t, 10*testLease, "lease deadline renewed past three leases", func() bool {
			return rdb.ZScore(ctx(t), keys.Nodes().Leases(), "7").Val() > first+float64(3*testLease.Milliseconds())
		})
		if !slices.Equal(ids(snapshot(t, r)), []int{7}) {
			t.Fatal("slave 7 dropped while KeepAlive ran")
		}
		if err := stop(); err != nil {
			t.Fatalf("KeepAlive after cancel = %v; want nil", err)
		}
		if n := len(snapshot(t, r).Nodes); n != 0 {
			t.Fatalf("%d nodes after KeepAlive ended; want it deregistered", n)
		}
	})
	t.Run("reports a lost lease", func(t *testing.T) {
		r, rdb, keys := newRegistry(t, Options{})
		done, _ := runKeepAlive(t, r, 3, "run1")
		testenv.Eventually(t, time.Second, "slave 3 registers", func() bool { return len(snapshot(t, r).Nodes) == 1 })
		if err := rdb.ZRem(ctx(t), keys.Nodes().Leases(), "3").Err(); err != nil {
			t.Fatal(err)
		}
		mustRegister(t, r, node(3, "run2"))
		select {
		case err := <-done:
			if !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("KeepAlive = %v; want ErrLeaseLost", err)
			}
		case <-time.After(5 * testLease):
			t.Fatal("KeepAlive did not notice that run2 took slave 3")
		}
	})
	t.Run("id taken", func(t *testing.T) {
		r, _, _ := newRegistry(t, Options{})
		mustRegister(t, r, node(2, "holder"))
		done, _ := runKeepAlive(t, r, 2, "intruder")
		if err := <-done; !errors.Is(err, ErrIDTaken) {
			t.Fatalf("KeepAlive on a live id = %v; want ErrIDTaken", err)
		}
	})
}

func TestRegistry_Watch(t *testing.T) {
	r, _, _ := newRegistry(t, Options{})
	tables := make(chan assign.Table, 16)
	c, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- r.Watch(c, 20*time.Millisecond, func(t assign.Table) { tables <- t }) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Watch = %v; want nil after cancel", err)
		}
	}()
	expect := func(want []int, what string) assign.Table {
		t.Helper()
		select {
		case table := <-tables:
			if !slices.Equal(ids(table), want) {
				t.Fatalf("%s: Watch reported %v, want %v", what, ids(table), want)
			}
			return table
		case <-time.After(5 * testLease):
			t.Fatalf("%s: Watch reported nothing", what)
		}
		return assign.Table{}
	}
	expect([]int{}, "start")
	mustRegister(t, r, node(1, "a"))
	expect([]int{1}, "join")
	mustRegister(t, r, node(2, "b"))
	expect([]int{1, 2}, "second join")
	if err := r.Deregister(ctx(t), 2, "b"); err != nil {
		t.Fatal(err)
	}
	expect([]int{1}, "leave")
	expect([]int{}, "lease of slave 1 lapses")
}

// TestRegistry_WatchEvery_wake: a wake cuts the interval short, so a
// master that takes a job reads the live table at once.
func TestRegistry_WatchEvery_wake(t *testing.T) {
	r, _, _ := newRegistry(t, Options{})
	tables := make(chan assign.Table, 16)
	wake := make(chan struct{}, 1)
	c, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	hour := func() time.Duration { return time.Hour }
	go func() { errc <- r.WatchEvery(c, hour, wake, func(t assign.Table) { tables <- t }) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("WatchEvery = %v; want nil after cancel", err)
		}
	}()
	if first := <-tables; len(first.Nodes) != 0 {
		t.Fatalf("first table %v, want empty", ids(first))
	}
	mustRegister(t, r, node(1, "a"))
	select {
	case table := <-tables:
		t.Fatalf("Watch read %v before its hour-long interval or a wake", ids(table))
	case <-time.After(100 * time.Millisecond):
	}
	wake <- struct{}{}
	select {
	case table := <-tables:
		if !slices.Equal(ids(table), []int{1}) {
			t.Fatalf("after the wake Watch reported %v, want [1]", ids(table))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a wake did not make Watch read the table")
	}
}
