package membership

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// testLease is short so that expiry tests take a fraction of a second.
const testLease = 400 * time.Millisecond

// newRegistry returns a Registry on a fresh key prefix of the test Redis.
func newRegistry(t *testing.T, opts Options) (*Registry, *redis.Client, cluster.Keys) {
	t.Helper()
	rdb, keys := testenv.Redis(t)
	if opts.Lease == 0 {
		opts.Lease = testLease
	}
	r, err := New(rdb, keys, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r, rdb, keys
}

// newMovedRegistry returns a Registry on an in-process Redis whose clock
// only the test moves (testenv.MovedRedis): a lease lapses when the test
// says so, to the millisecond.
func newMovedRegistry(t *testing.T, opts Options) (*Registry, *testenv.Clock) {
	t.Helper()
	rdb, keys, clock := testenv.MovedRedis(t)
	if opts.Lease == 0 {
		opts.Lease = testLease
	}
	r, err := New(rdb, keys, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r, clock
}

// node is a NodeInfo for slave id run token.
func node(id int, token string) cluster.NodeInfo {
	return cluster.NodeInfo{ID: id, Weight: 1, Host: "host-" + token, PID: 1000 + id, Token: token}
}

// ctx returns a context that ends with the test.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// snapshot takes a Snapshot or fails the test.
func snapshot(t *testing.T, r *Registry) assign.Table {
	t.Helper()
	table, err := r.Snapshot(ctx(t))
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	return table
}

// ids lists a table's node IDs.
func ids(table assign.Table) []int {
	out := make([]int, len(table.Nodes))
	for i, n := range table.Nodes {
		out[i] = n.ID
	}
	return out
}

// mustRegister registers info or fails the test.
func mustRegister(t *testing.T, r *Registry, info cluster.NodeInfo) {
	t.Helper()
	if err := r.Register(ctx(t), info); err != nil {
		t.Fatalf("Register(%d): %v", info.ID, err)
	}
}
