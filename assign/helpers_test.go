package assign

import (
	"crypto/sha1"
	"strconv"
	"sync"
	"testing"
)

// testKeyCount is the number of keys the balance, weight and churn tests route.
const testKeyCount = 1_000_000

var (
	testKeysOnce sync.Once
	testKeys     [][]byte
)

// keys returns n (at most testKeyCount) URL fingerprints: SHA1 of
// distinct URLs, as the master computes them. They are made once per run.
func keys(n int) [][]byte {
	testKeysOnce.Do(func() {
		buf := make([]byte, 0, testKeyCount*sha1.Size)
		testKeys = make([][]byte, testKeyCount)
		url := []byte("https://example.com/item/")
		for i := range testKeys {
			sum := sha1.Sum(strconv.AppendInt(url, int64(i), 10))
			buf = append(buf, sum[:]...)
			testKeys[i] = buf[len(buf)-sha1.Size:]
		}
	})
	return testKeys[:n]
}

// mustAssigner builds an Assigner or fails the test.
func mustAssigner(t testing.TB, opts Options) *Assigner {
	t.Helper()
	a, err := New(opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	return a
}

// mustSnapshot prepares table or fails the test.
func mustSnapshot(t testing.TB, a *Assigner, table Table) *Snapshot {
	t.Helper()
	s, err := a.Snapshot(table)
	if err != nil {
		t.Fatalf("Snapshot(%+v): %v", table, err)
	}
	return s
}

// routeAll routes every key and fails the test on an error or on a route to
// a node that is not in the snapshot.
func routeAll(t testing.TB, s *Snapshot, keys [][]byte) []int32 {
	t.Helper()
	out := make([]int32, len(keys))
	for i, k := range keys {
		id, err := s.Route(k)
		if err != nil {
			t.Fatalf("Route: %v", err)
		}
		out[i] = int32(id)
	}
	for _, id := range out {
		if !s.Live(int(id)) {
			t.Fatalf("routed to node %d, which is not live (version %d)", id, s.Version())
		}
	}
	return out
}

// counts returns how many routes went to each node ID.
func counts(routes []int32) map[int]int {
	c := make(map[int]int)
	for _, id := range routes {
		c[int(id)]++
	}
	return c
}

// equalTable is a table of the given IDs, all of weight 1.
func equalTable(version int64, ids ...int) Table {
	t := Table{Version: version}
	for _, id := range ids {
		t.Nodes = append(t.Nodes, Node{ID: id, Weight: 1})
	}
	return t
}

// span returns the IDs lo..hi-1.
func span(lo, hi int) []int {
	ids := make([]int, 0, hi-lo)
	for id := lo; id < hi; id++ {
		ids = append(ids, id)
	}
	return ids
}

// without returns table minus node id, with the version bumped.
func without(table Table, id int) Table {
	out := Table{Version: table.Version + 1}
	for _, n := range table.Nodes {
		if n.ID != id {
			out.Nodes = append(out.Nodes, n)
		}
	}
	return out
}

// with returns table plus node n, with the version bumped.
func with(table Table, n Node) Table {
	out := Table{Version: table.Version + 1, Nodes: append([]Node(nil), table.Nodes...)}
	out.Nodes = append(out.Nodes, n)
	return out
}

// totalWeight sums the table's weights, each capped at maxWeight.
func totalWeight(table Table, maxWeight float64) float64 {
	var w float64
	for _, n := range table.Nodes {
		w += min(n.Weight, maxWeight)
	}
	return w
}
