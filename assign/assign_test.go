package assign

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"defaults", Options{Slots: 64}, ""},
		{"paper", Options{Slots: 1, Mode: ModePaper}, ""},
		{"zero slots", Options{}, "slots 0"},
		{"negative slots", Options{Slots: -3}, "slots -3"},
		{"unknown mode", Options{Slots: 64, Mode: "ring"}, `mode "ring"`},
		{"negative max weight", Options{Slots: 64, MaxWeight: -1}, "max weight -1"},
		{"infinite max weight", Options{Slots: 64, MaxWeight: math.Inf(1)}, "max weight +Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.opts)
			if tt.wantErr == "" {
				if err != nil || a == nil {
					t.Fatalf("New(%+v) = %v, %v; want an assigner", tt.opts, a, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New(%+v) error = %v; want one naming %q", tt.opts, err, tt.wantErr)
			}
		})
	}
}

func TestAssigner_Snapshot(t *testing.T) {
	a := mustAssigner(t, Options{Slots: 8})
	tests := []struct {
		name    string
		nodes   []Node
		wantErr string
	}{
		{"ok unsorted", []Node{{ID: 5, Weight: 1}, {ID: 2, Weight: 0.5}}, ""},
		{"empty", nil, ""},
		{"id too big", []Node{{ID: 8, Weight: 1}}, "node id 8: outside [0, 8)"},
		{"negative id", []Node{{ID: -1, Weight: 1}}, "node id -1"},
		{"duplicate", []Node{{ID: 3, Weight: 1}, {ID: 3, Weight: 1}}, "node id 3: listed twice"},
		{"zero weight", []Node{{ID: 3, Weight: 0}}, "node 3: weight 0"},
		{"NaN weight", []Node{{ID: 4, Weight: math.NaN()}}, "node 4: weight NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := a.Snapshot(Table{Version: 7, Nodes: tt.nodes})
			if tt.wantErr == "" {
				if err != nil || s.Version() != 7 || s.Len() != len(tt.nodes) {
					t.Fatalf("Snapshot = %+v, %v; want version 7 with %d nodes", s, err, len(tt.nodes))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Snapshot error = %v; want one naming %q", err, tt.wantErr)
			}
		})
	}
}

func TestAssigner_Route(t *testing.T) {
	t.Run("empty table", testRouteEmpty)
	t.Run("deterministic", testRouteDeterministic)
	t.Run("first level", testRouteFirstLevel)
	t.Run("equal weights are paper first level plus rendezvous", testRouteEqualIsHRW)
	t.Run("balance", testRouteBalance)
	t.Run("weighted shares", testRouteWeighted)
	t.Run("churn", testRouteChurn)
}

func testRouteEmpty(t *testing.T) {
	for _, mode := range []Mode{ModeRendezvous, ModePaper} {
		s := mustSnapshot(t, mustAssigner(t, Options{Slots: 64, Mode: mode}), Table{})
		if id, err := s.Route(keys(1)[0]); !errors.Is(err, ErrNoLiveNodes) {
			t.Errorf("%s: Route on an empty table = %d, %v; want ErrNoLiveNodes", mode, id, err)
		}
	}
}

// testRouteDeterministic checks that two masters holding the same table,
// listed in a different order, route every key alike, and that a key with
// the same bytes in another buffer routes alike.
func testRouteDeterministic(t *testing.T) {
	ks := keys(100_000)
	table := Table{Version: 3, Nodes: []Node{{ID: 0, Weight: 1}, {ID: 7, Weight: 0.5}, {ID: 12, Weight: 0.8}, {ID: 40, Weight: 1}, {ID: 63, Weight: 0.3}}}
	reversed := Table{Version: 3}
	for i := len(table.Nodes) - 1; i >= 0; i-- {
		reversed.Nodes = append(reversed.Nodes, table.Nodes[i])
	}
	for _, mode := range []Mode{ModeRendezvous, ModePaper} {
		opts := Options{Slots: 64, Mode: mode}
		r1 := routeAll(t, mustSnapshot(t, mustAssigner(t, opts), table), ks)
		r2 := routeAll(t, mustSnapshot(t, mustAssigner(t, opts), reversed), ks)
		for i := range r1 {
			if r1[i] != r2[i] {
				t.Fatalf("%s: key %d routed to %d and to %d by the same table", mode, i, r1[i], r2[i])
			}
		}
		s := mustSnapshot(t, mustAssigner(t, opts), table)
		if id, _ := s.Route(append([]byte(nil), ks[42]...)); id != int(r1[42]) {
			t.Fatalf("%s: copied key routed to %d, want %d", mode, id, r1[42])
		}
	}
}

// testRouteFirstLevel checks the first level against concrete slots: a key
// whose slot is a live full-weight node goes there, and a key whose slot is
// not live never does.
func testRouteFirstLevel(t *testing.T) {
	a := mustAssigner(t, Options{Slots: 16})
	s := mustSnapshot(t, a, equalTable(1, 1, 4, 9))
	for _, k := range keys(20_000) {
		h1, _ := keyHash(k)
		slot := int(h1 % 16)
		id, err := s.Route(k)
		if err != nil {
			t.Fatal(err)
		}
		if s.Live(slot) && id != slot {
			t.Fatalf("key with live slot %d routed to %d", slot, id)
		}
	}
}

// testRouteEqualIsHRW checks that with equal weights the second level is
// plain highest-random-weight hashing (the node with the largest draw wins),
// and that the logarithm path agrees with the equal-weight shortcut.
func testRouteEqualIsHRW(t *testing.T) {
	a := mustAssigner(t, Options{Slots: 64})
	table := equalTable(1, 2, 5, 11, 30, 31, 50)
	s := mustSnapshot(t, a, table)
	if !s.equal {
		t.Fatal("equal weights did not take the equal-weight path")
	}
	for _, k := range keys(50_000) {
		h1, h2 := keyHash(k)
		want := int(h1 % 64)
		if !s.Live(want) {
			want = plainHRW(raceBase(h1, h2), table)
		}
		if id, _ := s.Route(k); id != want {
			t.Fatalf("Route = %d, want %d (paper first level, then plain rendezvous)", id, want)
		}
		base := raceBase(h1, h2)
		if e, w := s.raceEqual(base), s.raceWeighted(base); e != w {
			t.Fatalf("equal-weight race picks node index %d, weighted race %d", e, w)
		}
	}
}

// plainHRW is textbook rendezvous hashing: the node with the largest draw.
func plainHRW(base uint64, table Table) int {
	best, bestDraw := -1, uint64(0)
	for _, n := range table.Nodes {
		if d := draw(base, nodeSeed(n.ID)) >> 11; best < 0 || d > bestDraw {
			best, bestDraw = n.ID, d
		}
	}
	return best
}

func testRouteBalance(t *testing.T) {
	tests := []struct {
		name string
		ids  []int
	}{
		{"ids 0-9", span(0, 10)},
		{"scattered ids", []int{3, 8, 17, 21, 22, 40, 41, 55, 60, 63}},
		{"no first-level hits", span(54, 64)},
	}
	a := mustAssigner(t, Options{Slots: 64})
	ks := keys(testKeyCount)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := counts(routeAll(t, mustSnapshot(t, a, equalTable(1, tt.ids...)), ks))
			mean := float64(len(ks)) / float64(len(tt.ids))
			peak := 0
			for _, id := range tt.ids {
				peak = max(peak, c[id])
			}
			ratio := float64(peak) / mean
			t.Logf("max/mean = %.4f over %d keys, %d nodes", ratio, len(ks), len(tt.ids))
			if ratio > 1.05 {
				t.Errorf("max/mean = %.4f, want <= 1.05 (counts %v)", ratio, c)
			}
		})
	}
}

func testRouteWeighted(t *testing.T) {
	tests := []struct {
		name      string
		maxWeight float64
		nodes     []Node
	}{
		{"light and full", 1, []Node{{ID: 0, Weight: 1}, {ID: 1, Weight: 0.5}, {ID: 2, Weight: 0.25}, {ID: 3, Weight: 1}, {ID: 4, Weight: 0.75}, {ID: 5, Weight: 0.5}, {ID: 6, Weight: 1}, {ID: 7, Weight: 0.3}, {ID: 8, Weight: 0.6}, {ID: 9, Weight: 0.9}}},
		{"scattered ids", 1, []Node{{ID: 5, Weight: 0.2}, {ID: 17, Weight: 1}, {ID: 33, Weight: 0.4}, {ID: 60, Weight: 0.8}}},
		{"max weight 32", 32, []Node{{ID: 0, Weight: 32}, {ID: 1, Weight: 16}, {ID: 2, Weight: 8}, {ID: 3, Weight: 8}, {ID: 10, Weight: 4}, {ID: 11, Weight: 4}}},
		{"above max weight counts as max", 1, []Node{{ID: 0, Weight: 3}, {ID: 1, Weight: 1}, {ID: 2, Weight: 0.5}}},
	}
	ks := keys(testKeyCount)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustAssigner(t, Options{Slots: 64, MaxWeight: tt.maxWeight})
			table := Table{Version: 1, Nodes: tt.nodes}
			c := counts(routeAll(t, mustSnapshot(t, a, table), ks))
			total := totalWeight(table, tt.maxWeight)
			for _, n := range tt.nodes {
				want := min(n.Weight, tt.maxWeight) / total
				got := float64(c[n.ID]) / float64(len(ks))
				if math.Abs(got/want-1) > 0.05 {
					t.Errorf("node %d (weight %v): share %.4f, want %.4f ±5%%", n.ID, n.Weight, got, want)
				}
			}
		})
	}
}

// TestTable_Renderers: the renderers' table keeps the version and the
// nodes that can render; routed over it, every key goes to a renderer, and
// a renderer joining takes keys only from the others, never moving one
// between them.
func TestTable_Renderers(t *testing.T) {
	a := mustAssigner(t, Options{Slots: 64})
	table := Table{Version: 4, Nodes: []Node{{ID: 0, Weight: 1}, {ID: 3, Weight: 1, Render: true}, {ID: 9, Weight: 1, Render: true}}}
	r := table.Renderers()
	if r.Version != 4 || len(r.Nodes) != 2 || r.Nodes[0].ID != 3 || r.Nodes[1].ID != 9 {
		t.Fatalf("Renderers = %+v, want version 4 with nodes 3 and 9", r)
	}
	ks := keys(20_000)
	before := routeAll(t, mustSnapshot(t, a, r), ks)
	for _, to := range before {
		if to != 3 && to != 9 {
			t.Fatalf("a key routed to %d, not a renderer", to)
		}
	}
	after := routeAll(t, mustSnapshot(t, a, with(r, Node{ID: 20, Weight: 1, Render: true})), ks)
	for i := range ks {
		if before[i] != after[i] && after[i] != 20 {
			t.Fatalf("key %d moved from %d to %d when renderer 20 joined", i, before[i], after[i])
		}
	}
}
