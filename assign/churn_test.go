package assign

import (
	"math"
	"math/rand/v2"
	"testing"
)

// churn compares routes before and after node id left or joined. It returns
// the share of keys that moved and how many of them moved without leaving
// or reaching id (a monotone scheme has none).
func churn(before, after []int32, id int) (share float64, stray int) {
	moved := 0
	for i := range before {
		if before[i] == after[i] {
			continue
		}
		moved++
		if int(before[i]) != id && int(after[i]) != id {
			stray++
		}
	}
	return float64(moved) / float64(len(before)), stray
}

// churnCase is one join or leave of node changed: from the base table to
// after.
type churnCase struct {
	name    string
	after   Table
	changed Node
	join    bool
}

// ideal is the share of keys that must move: the changed node's share of
// the larger of the two tables.
func (c churnCase) ideal(base Table) float64 {
	w := min(c.changed.Weight, DefaultMaxWeight)
	if c.join {
		return w / totalWeight(c.after, DefaultMaxWeight)
	}
	return w / totalWeight(base, DefaultMaxWeight)
}

// paperChurnKeys is how many keys measure the paper mode's churn, which is
// only logged for comparison; its ~77% needs no million keys.
const paperChurnKeys = 200_000

func testRouteChurn(t *testing.T) {
	equal := equalTable(1, span(0, 10)...)
	weighted := Table{Version: 1, Nodes: []Node{{ID: 0, Weight: 1}, {ID: 1, Weight: 0.5}, {ID: 2, Weight: 0.25}, {ID: 3, Weight: 1}, {ID: 4, Weight: 0.75}, {ID: 5, Weight: 0.5}, {ID: 6, Weight: 1}, {ID: 7, Weight: 0.3}, {ID: 8, Weight: 0.6}, {ID: 9, Weight: 0.9}}}
	tests := []struct {
		name  string
		base  Table
		cases []churnCase
	}{
		{"equal weights", equal, []churnCase{
			{"leave 3", without(equal, 3), Node{ID: 3, Weight: 1}, false},
			{"join 10", with(equal, Node{ID: 10, Weight: 1}), Node{ID: 10, Weight: 1}, true},
			{"join 63", with(equal, Node{ID: 63, Weight: 1}), Node{ID: 63, Weight: 1}, true},
		}},
		{"weighted", weighted, []churnCase{
			{"leave heavy 6", without(weighted, 6), Node{ID: 6, Weight: 1}, false},
			{"leave light 2", without(weighted, 2), Node{ID: 2, Weight: 0.25}, false},
			{"join light 30", with(weighted, Node{ID: 30, Weight: 0.4}), Node{ID: 30, Weight: 0.4}, true},
		}},
	}
	ks := keys(testKeyCount)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rdv := mustAssigner(t, Options{Slots: 64})
			paper := mustAssigner(t, Options{Slots: 64, Mode: ModePaper})
			rdvBase := routeAll(t, mustSnapshot(t, rdv, tt.base), ks)
			paperKeys := ks[:paperChurnKeys]
			paperBase := routeAll(t, mustSnapshot(t, paper, tt.base), paperKeys)
			for _, c := range tt.cases {
				t.Run(c.name, func(t *testing.T) {
					checkChurn(t, c, c.ideal(tt.base), rdvBase, routeAll(t, mustSnapshot(t, rdv, c.after), ks))
					share, _ := churn(paperBase, routeAll(t, mustSnapshot(t, paper, c.after), paperKeys), c.changed.ID)
					t.Logf("paper mode moved %.2f%% (%.1fx the ideal)", 100*share, share/c.ideal(tt.base))
				})
			}
		})
	}
}

// checkChurn asserts that only keys of the changed node moved and that
// their share is within 5% of the ideal.
func checkChurn(t *testing.T, c churnCase, ideal float64, before, after []int32) {
	t.Helper()
	share, stray := churn(before, after, c.changed.ID)
	t.Logf("rendezvous moved %.2f%%, ideal %.2f%% (%.3fx)", 100*share, 100*ideal, share/ideal)
	if stray > 0 {
		t.Errorf("%d keys moved between nodes other than %d", stray, c.changed.ID)
	}
	if share > 1.05*ideal {
		t.Errorf("moved %.4f of the keys, want <= 1.05 x ideal %.4f", share, ideal)
	}
}

// TestAssigner_RouteProperties checks random tables: random a, live IDs,
// weights and weight scale. For each it asserts that routes only reach live
// nodes, that shares follow the weights (within 5 standard deviations of
// the binomial), and that a random leave and a random join move only keys
// of the node that changed. The seeds are fixed, so a failure reproduces.
func TestAssigner_RouteProperties(t *testing.T) {
	ks := keys(100_000)
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 0xc0ffee))
		slots := 2 + rng.IntN(127)
		maxWeight := []float64{1, 4, 100}[rng.IntN(3)]
		a := mustAssigner(t, Options{Slots: slots, MaxWeight: maxWeight})
		table := randomTable(rng, slots, maxWeight)
		before := routeAll(t, mustSnapshot(t, a, table), ks)
		checkShares(t, table, maxWeight, before)

		leaving := table.Nodes[rng.IntN(len(table.Nodes))]
		if len(table.Nodes) > 1 {
			after := routeAll(t, mustSnapshot(t, a, without(table, leaving.ID)), ks)
			if _, stray := churn(before, after, leaving.ID); stray > 0 {
				t.Errorf("seed %d: %d keys moved between bystanders when %d left", seed, stray, leaving.ID)
			}
		}
		if joining, ok := freeID(rng, slots, table); ok {
			n := Node{ID: joining, Weight: randomWeight(rng, maxWeight)}
			after := routeAll(t, mustSnapshot(t, a, with(table, n)), ks)
			if _, stray := churn(before, after, joining); stray > 0 {
				t.Errorf("seed %d: %d keys moved between bystanders when %d joined", seed, stray, joining)
			}
		}
	}
}

// checkShares asserts every node's share is within 5 binomial standard
// deviations of weight/total.
func checkShares(t *testing.T, table Table, maxWeight float64, routes []int32) {
	t.Helper()
	c := counts(routes)
	total := totalWeight(table, maxWeight)
	n := float64(len(routes))
	for _, node := range table.Nodes {
		p := min(node.Weight, maxWeight) / total
		if sd := math.Sqrt(n * p * (1 - p)); math.Abs(float64(c[node.ID])-n*p) > 5*sd {
			t.Errorf("slots table %+v: node %d got %d keys, want %.0f ± %.0f", table, node.ID, c[node.ID], n*p, 5*sd)
		}
	}
}

// randomTable draws 1..min(slots, 16) live nodes with random IDs and weights.
func randomTable(rng *rand.Rand, slots int, maxWeight float64) Table {
	n := 1 + rng.IntN(min(slots, 16))
	table := Table{Version: 1}
	for _, id := range rng.Perm(slots)[:n] {
		table.Nodes = append(table.Nodes, Node{ID: id, Weight: randomWeight(rng, maxWeight)})
	}
	return table
}

// randomWeight is a weight in [maxWeight/8, 1.5·maxWeight): some above the
// scale, to exercise clamping.
func randomWeight(rng *rand.Rand, maxWeight float64) float64 {
	return maxWeight * (0.125 + 1.375*rng.Float64())
}

// freeID picks an ID not in table, if any.
func freeID(rng *rand.Rand, slots int, table Table) (int, bool) {
	used := make(map[int]bool)
	for _, n := range table.Nodes {
		used[n.ID] = true
	}
	for _, id := range rng.Perm(slots) {
		if !used[id] {
			return id, true
		}
	}
	return 0, false
}
