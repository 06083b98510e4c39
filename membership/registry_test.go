package membership

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

func TestNew(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"defaults", Options{}, ""},
		{"negative max slaves", Options{MaxSlaves: -1}, "max slaves -1"},
		{"tiny lease", Options{Lease: time.Millisecond}, "lease 1ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(rdb, keys, tt.opts)
			if tt.wantErr == "" {
				if err != nil || r.Lease() != DefaultLease || r.MaxSlaves() != cluster.DefaultMaxSlaves {
					t.Fatalf("New = %v, %v; want defaults", r, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v; want one naming %q", err, tt.wantErr)
			}
		})
	}
}

func TestRegistry_Register(t *testing.T) {
	t.Run("join", func(t *testing.T) {
		r, _, _ := newRegistry(t, Options{})
		before := snapshot(t, r)
		info := node(3, "a")
		info.Weight = 0.5
		mustRegister(t, r, info)
		mustRegister(t, r, node(1, "b"))
		table := snapshot(t, r)
		want := []assign.Node{{ID: 1, Weight: 1}, {ID: 3, Weight: 0.5}}
		if !slices.Equal(table.Nodes, want) || table.Version == before.Version {
			t.Fatalf("after two joins: %+v (before: version %d); want nodes %v and a new version", table, before.Version, want)
		}
	})
	t.Run("duplicate id refused while live", func(t *testing.T) {
		r, _, _ := newRegistry(t, Options{})
		mustRegister(t, r, node(5, "first"))
		err := r.Register(ctx(t), node(5, "second"))
		if !errors.Is(err, ErrIDTaken) || !strings.Contains(err.Error(), "host-first pid 1005") {
			t.Fatalf("Register of a live id = %v; want ErrIDTaken naming host-first pid 1005", err)
		}
	})
	t.Run("same token re-registers", func(t *testing.T) {
		r, _, _ := newRegistry(t, Options{})
		mustRegister(t, r, node(5, "first"))
		mustRegister(t, r, node(5, "first"))
	})
	t.Run("rejoin after expiry", func(t *testing.T) {
		r, clock := newMovedRegistry(t, Options{})
		mustRegister(t, r, node(2, "old"))
		clock.Advance(testLease - time.Millisecond)
		if n := len(snapshot(t, r).Nodes); n != 1 {
			t.Fatalf("%d nodes a millisecond before the lease ends; want slave 2 still live", n)
		}
		clock.Advance(time.Millisecond)
		if n := len(snapshot(t, r).Nodes); n != 0 {
			t.Fatalf("%d nodes when the lease ends; want slave 2's lease lapsed", n)
		}
		mustRegister(t, r, node(2, "new"))
		nodes, err := r.Nodes(ctx(t))
		if err != nil || len(nodes) != 1 || nodes[0].Token != "new" {
			t.Fatalf("Nodes = %+v, %v; want slave 2 held by token new", nodes, err)
		}
	})
	t.Run("bad node refused", func(t *testing.T) {
		r, _, _ := newRegistry(t, Options{MaxSlaves: 8})
		for _, info := range []cluster.NodeInfo{node(8, "x"), node(-1, "x"), node(1, ""), {ID: 1, Token: "x", Weight: -2}} {
			if err := r.Register(ctx(t), info); !errors.Is(err, ErrInvalidNode) {
				t.Errorf("Register(%+v) = %v; want ErrInvalidNode", info, err)
			}
		}
	})
}

// TestRegistry_Expiry: a slave that stops heartbeating drops out when its
// lease ends, on the server's clock, moved by the test; one that
// heartbeats stays.
func TestRegistry_Expiry(t *testing.T) {
	r, clock := newMovedRegistry(t, Options{})
	mustRegister(t, r, node(0, "a"))
	mustRegister(t, r, node(1, "b"))
	joined := snapshot(t, r)
	clock.Advance(testLease / 2)
	if err := r.Heartbeat(ctx(t), 1, "b"); err != nil {
		t.Fatalf("Heartbeat(1): %v", err)
	}
	clock.Advance(testLease / 2)
	if got := ids(snapshot(t, r)); !slices.Equal(got, []int{1}) {
		t.Fatalf("slaves %v when slave 0's lease ends; want slave 1 alone (it heartbeat)", got)
	}
	if left := snapshot(t, r); left.Version == joined.Version {
		t.Fatalf("version %d unchanged after slave 0's lease lapsed", left.Version)
	}
	if err := r.Heartbeat(ctx(t), 0, "a"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Heartbeat after lapse = %v; want ErrLeaseLost", err)
	}
}

func TestRegistry_Heartbeat(t *testing.T) {
	r, _, _ := newRegistry(t, Options{})
	mustRegister(t, r, node(4, "live"))
	if err := r.Heartbeat(ctx(t), 4, "live"); err != nil {
		t.Fatalf("Heartbeat: %v", err)
	}
	if err := r.Heartbeat(ctx(t), 4, "stale"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Heartbeat with a stale token = %v; want ErrLeaseLost", err)
	}
	if err := r.Heartbeat(ctx(t), 9, "never"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Heartbeat of an unknown slave = %v; want ErrLeaseLost", err)
	}
}

func TestRegistry_Deregister(t *testing.T) {
	r, _, _ := newRegistry(t, Options{})
	mustRegister(t, r, node(6, "me"))
	joined := snapshot(t, r)
	if err := r.Deregister(ctx(t), 6, "someone else"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Deregister with another token = %v; want ErrLeaseLost", err)
	}
	if err := r.Deregister(ctx(t), 6, "me"); err != nil {
		t.Fatalf("Deregister: %v", err)
	}
	left := snapshot(t, r)
	if len(left.Nodes) != 0 || left.Version == joined.Version {
		t.Fatalf("after Deregister: %+v (joined at version %d); want empty with a new version", left, joined.Version)
	}
	if err := r.Deregister(ctx(t), 6, "me"); err != nil {
		t.Fatalf("second Deregister = %v; want nil", err)
	}
}

func TestRegistry_VersionStable(t *testing.T) {
	r, _, _ := newRegistry(t, Options{})
	mustRegister(t, r, node(0, "a"))
	first := snapshot(t, r)
	for range 5 {
		if err := r.Heartbeat(ctx(t), 0, "a"); err != nil {
			t.Fatalf("Heartbeat: %v", err)
		}
		if now := snapshot(t, r); now.Version != first.Version || !slices.Equal(now.Nodes, first.Nodes) {
			t.Fatalf("table changed with no join or leave: %+v, then %+v", first, now)
		}
	}
}

func TestRegistry_MaxSlavesMismatch(t *testing.T) {
	r, rdb, keys := newRegistry(t, Options{MaxSlaves: 64})
	mustRegister(t, r, node(0, "a"))
	other, err := New(rdb, keys, Options{MaxSlaves: 32, Lease: testLease})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Snapshot(ctx(t)); !errors.Is(err, ErrMaxSlavesMismatch) || !strings.Contains(err.Error(), "records 64, this process uses 32") {
		t.Fatalf("Snapshot with another max slaves = %v; want ErrMaxSlavesMismatch naming 64 and 32", err)
	}
	if err := other.Register(ctx(t), node(1, "b")); !errors.Is(err, ErrMaxSlavesMismatch) {
		t.Fatalf("Register with another max slaves = %v; want ErrMaxSlavesMismatch", err)
	}
	if got := rdb.HGet(ctx(t), keys.Nodes().Config(), ConfigMaxSlaves).Val(); got != "64" {
		t.Fatalf("recorded max slaves = %q, want 64", got)
	}
}

// TestRegistry_Render: whether a slave can render comes back in the table,
// and a slave that takes its offer back (registering again, same run)
// bumps the version, so masters route rendered kinds elsewhere.
func TestRegistry_Render(t *testing.T) {
	r, _, _ := newRegistry(t, Options{})
	renderer := node(1, "b")
	renderer.Render = true
	mustRegister(t, r, node(0, "a"))
	mustRegister(t, r, renderer)
	before := snapshot(t, r)
	if got := ids(before.Renderers()); !slices.Equal(got, []int{1}) {
		t.Fatalf("renderers %v, want [1] (table %+v)", got, before)
	}
	renderer.Render = false
	mustRegister(t, r, renderer)
	after := snapshot(t, r)
	if after.Version == before.Version || len(after.Renderers().Nodes) != 0 || !slices.Equal(ids(after), []int{0, 1}) {
		t.Errorf("after slave 1 took its offer back: %+v (was %+v); want a new version, both live, no renderer", after, before)
	}
}
