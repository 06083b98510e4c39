package assign

import (
	"errors"
	"fmt"
	"math"
)

// Mode selects the second level of the assigner.
type Mode string

const (
	// ModeRendezvous (the default) makes the second level weighted
	// rendezvous hashing over the live table, and weights the first level so
	// that shares follow the weights. A join or leave moves only the keys
	// that must move.
	ModeRendezvous Mode = "rendezvous"
	// ModePaper is the seed paper's literal second level, live[hash mod n].
	// It ignores weights and is kept for comparison.
	ModePaper Mode = "paper"
)

// DefaultMaxWeight is the weight scale used when Options.MaxWeight is zero.
// It is also the weight a slave gets when it declares none.
const DefaultMaxWeight = 1.0

// ErrNoLiveNodes is returned by Route when the table has no live node.
var ErrNoLiveNodes = errors.New("assign: no live nodes")

// Options configure an Assigner. Every master of a cluster must use the same
// Options, or they route the same URL to different slaves.
type Options struct {
	// Slots is a, the size of the virtual node table: the most slaves the
	// cluster may ever have. Node IDs run from 0 to Slots-1. Required.
	Slots int
	// Mode selects the second level; empty means ModeRendezvous.
	Mode Mode
	// MaxWeight is the weight scale M: a node of weight M takes every key
	// of its own slot, a lighter node only the fraction weight/M of them.
	// Heavier weights count as M. Zero means DefaultMaxWeight.
	MaxWeight float64
}

// Node is one live slave in a Table.
type Node struct {
	// ID is the slave's ID, 0 <= ID < Slots.
	ID int
	// Weight is the slave's capacity, > 0; keys are spread in proportion
	// to it.
	Weight float64
	// Render is true when the slave can render pages (it has a browser).
	// Route ignores it; a caller that routes only among such slaves
	// builds a Snapshot of Table.Renderers.
	Render bool
}

// Table is a snapshot of the live node table as membership reports it.
type Table struct {
	// Version is the table's epoch; it changes on every join and leave.
	Version int64
	// Nodes are the live slaves, sorted by ID.
	Nodes []Node
}

// Renderers is the table of the nodes that can render, same version: a
// Snapshot of it routes a key to the node the consistent hash picks among
// them, so a renderer joining or leaving moves only its own share.
func (t Table) Renderers() Table {
	out := Table{Version: t.Version}
	for _, n := range t.Nodes {
		if n.Render {
			out.Nodes = append(out.Nodes, n)
		}
	}
	return out
}

// Assigner holds the cluster-wide constants of the two-level hash. Its
// Snapshot method prepares one version of the live table for routing.
type Assigner struct {
	slots     int
	mode      Mode
	maxWeight float64
}

// New returns an Assigner for opts, or an error naming the bad option.
func New(opts Options) (*Assigner, error) {
	if opts.Slots <= 0 || opts.Slots > math.MaxInt32 {
		return nil, fmt.Errorf("assign: slots %d: must be in [1, %d]", opts.Slots, math.MaxInt32)
	}
	switch opts.Mode {
	case "":
		opts.Mode = ModeRendezvous
	case ModeRendezvous, ModePaper:
	default:
		return nil, fmt.Errorf("assign: mode %q: must be %q or %q", opts.Mode, ModeRendezvous, ModePaper)
	}
	if opts.MaxWeight == 0 {
		opts.MaxWeight = DefaultMaxWeight
	}
	if !validWeight(opts.MaxWeight) {
		return nil, fmt.Errorf("assign: max weight %v: must be a positive finite number", opts.MaxWeight)
	}
	return &Assigner{slots: opts.Slots, mode: opts.Mode, maxWeight: opts.MaxWeight}, nil
}

// Slots returns a, the size of the virtual node table.
func (a *Assigner) Slots() int { return a.slots }

// Mode returns the assigner's second-level mode.
func (a *Assigner) Mode() Mode { return a.mode }

func validWeight(w float64) bool {
	return w > 0 && !math.IsInf(w, 0) && !math.IsNaN(w)
}
