package assign

import (
	"fmt"
	"math"
	"slices"
)

// acceptAll is the first-level threshold of a node of weight >= MaxWeight:
// every 53-bit draw is below it.
const acceptAll = uint64(1) << 53

// Snapshot is one version of the live table prepared for routing. It is
// immutable, so one Snapshot may route from many goroutines at once.
type Snapshot struct {
	version int64
	mode    Mode
	slots   uint64
	slot    []int32 // by slot: index into nodes of the live node, or -1
	nodes   []node  // live nodes sorted by ID
	equal   bool    // all weights equal: the race needs no logarithm
}

// node is a live node with its per-node routing constants.
type node struct {
	id        int
	weight    float64 // clamped to MaxWeight
	seed      uint64  // mixed into the key hash for the rendezvous draw
	accept    uint64  // first level: accept a key of this slot if v < accept
	invWeight float64 // 1/weight for the rendezvous race
}

// Snapshot validates t and prepares it for routing. It returns an error
// naming the offending node if an ID is outside [0, Slots), repeated, or its
// weight is not a positive finite number. t is not modified or retained.
func (a *Assigner) Snapshot(t Table) (*Snapshot, error) {
	s := &Snapshot{
		version: t.Version,
		mode:    a.mode,
		slots:   uint64(a.slots),
		slot:    make([]int32, a.slots),
		nodes:   make([]node, 0, len(t.Nodes)),
		equal:   true,
	}
	sorted := slices.Clone(t.Nodes)
	slices.SortFunc(sorted, func(x, y Node) int { return x.ID - y.ID })
	for i := range s.slot {
		s.slot[i] = -1
	}
	for _, n := range sorted {
		if err := s.add(a, n); err != nil {
			return nil, fmt.Errorf("assign: table version %d: %w", t.Version, err)
		}
	}
	return s, nil
}

// add appends n to the snapshot, after checking it.
func (s *Snapshot) add(a *Assigner, n Node) error {
	if n.ID < 0 || n.ID >= a.slots {
		return fmt.Errorf("node id %d: outside [0, %d)", n.ID, a.slots)
	}
	if s.slot[n.ID] >= 0 {
		return fmt.Errorf("node id %d: listed twice", n.ID)
	}
	if !validWeight(n.Weight) {
		return fmt.Errorf("node %d: weight %v: must be a positive finite number", n.ID, n.Weight)
	}
	w := min(n.Weight, a.maxWeight)
	if len(s.nodes) > 0 && w != s.nodes[0].weight {
		s.equal = false
	}
	s.slot[n.ID] = int32(len(s.nodes))
	s.nodes = append(s.nodes, node{
		id:        n.ID,
		weight:    w,
		seed:      nodeSeed(n.ID),
		accept:    acceptThreshold(w, a.maxWeight, a.mode),
		invWeight: 1 / w,
	})
	return nil
}

// acceptThreshold is q = w/M scaled to the 53-bit first-level draw.
func acceptThreshold(w, maxWeight float64, mode Mode) uint64 {
	if mode == ModePaper || w >= maxWeight {
		return acceptAll
	}
	return uint64(math.Ldexp(w/maxWeight, 53))
}

// Version returns the version of the table the snapshot was taken from.
func (s *Snapshot) Version() int64 { return s.version }

// Len returns the number of live nodes.
func (s *Snapshot) Len() int { return len(s.nodes) }

// Live reports whether node id is in the snapshot.
func (s *Snapshot) Live(id int) bool {
	return id >= 0 && uint64(id) < s.slots && s.slot[id] >= 0
}

// Route returns the ID of the live node that key goes to. key is the URL's
// fingerprint (any length; all of it is hashed). It returns ErrNoLiveNodes
// when the table is empty. Route does not allocate.
func (s *Snapshot) Route(key []byte) (int, error) {
	if len(s.nodes) == 0 {
		return -1, ErrNoLiveNodes
	}
	h1, h2 := keyHash(key)
	if i := s.slot[h1%s.slots]; i >= 0 && h2>>11 < s.nodes[i].accept {
		return s.nodes[i].id, nil
	}
	if s.mode == ModePaper {
		return s.nodes[h1%uint64(len(s.nodes))].id, nil
	}
	return s.nodes[s.race(h1, h2)].id, nil
}

// race runs the weighted rendezvous over the live nodes and returns the
// winner's index: the node with the smallest -ln(u_i)/w_i.
func (s *Snapshot) race(h1, h2 uint64) int {
	base := raceBase(h1, h2)
	if s.equal {
		return s.raceEqual(base)
	}
	return s.raceWeighted(base)
}

// raceWeighted is race for unequal weights.
func (s *Snapshot) raceWeighted(base uint64) int {
	best, bestScore := 0, math.Inf(1)
	for i := range s.nodes {
		n := &s.nodes[i]
		score := -math.Log(unit(draw(base, n.seed))) * n.invWeight
		if score < bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// raceEqual is race for equal weights: -ln(u)/w is smallest where u is
// largest, so it compares the draws' top 53 bits (those u is made of) and
// skips the logarithm. Ties go to the lower ID in both paths.
func (s *Snapshot) raceEqual(base uint64) int {
	best, bestDraw := 0, uint64(0)
	for i := range s.nodes {
		if d := draw(base, s.nodes[i].seed) >> 11; i == 0 || d > bestDraw {
			best, bestDraw = i, d
		}
	}
	return best
}
