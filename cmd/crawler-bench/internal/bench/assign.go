package bench

import (
	"cmp"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/crawler-dev/crawler/assign"
)

// AssignOptions configure the assigner comparison.
type AssignOptions struct {
	// Slots is a, the size of the virtual node table (default 64).
	Slots int
	// Slaves is n, the number of live slaves, IDs 0..n-1 (default 10).
	Slaves int
	// Keys is how many URL fingerprints are routed (default 1,000,000).
	Keys int
}

func (o *AssignOptions) defaults() {
	o.Slots = cmp.Or(o.Slots, 64)
	o.Slaves = cmp.Or(o.Slaves, 10)
	o.Keys = cmp.Or(o.Keys, 1_000_000)
}

// Validate checks the options, naming the bad one.
func (o AssignOptions) Validate() error {
	switch {
	case o.Slaves < 2:
		return fmt.Errorf("slaves %d: need at least 2, one of them to leave", o.Slaves)
	case o.Slots <= o.Slaves:
		return fmt.Errorf("slots %d: must exceed slaves %d, to leave room for a join", o.Slots, o.Slaves)
	case o.Keys < 1:
		return fmt.Errorf("keys %d: must be positive", o.Keys)
	}
	return nil
}

// AssignResult is one scheme's row of the comparison.
type AssignResult struct {
	// Scheme names the routing scheme.
	Scheme string
	// RoutesPerSec is single-goroutine routing throughput.
	RoutesPerSec float64
	// Balance is the most loaded slave's key count over the mean.
	Balance float64
	// MovedOnLeave and MovedOnJoin are the shares of keys whose slave
	// changed when one slave left or one joined.
	MovedOnLeave, MovedOnJoin float64
	// Note qualifies the row, e.g. which slave a scheme can remove.
	Note string
}

// AssignReport is the whole comparison.
type AssignReport struct {
	// Options are the options the report was made with, defaults filled.
	Options AssignOptions
	// IdealLeave and IdealJoin are the shares that must move: 1/n, 1/(n+1).
	IdealLeave, IdealJoin float64
	// Results has one row per scheme.
	Results []AssignResult
}

// router routes a key over one live set of slave IDs.
type router func(key []byte) int

// scheme builds a router for a live set of slave IDs.
type scheme struct {
	name  string
	note  string
	build func(slots int, ids []int) (router, error)
	// lastOnly: the scheme can only remove its highest slave.
	lastOnly bool
}

// Assign routes opts.Keys URL fingerprints with each scheme over slaves
// 0..n-1 of a table of a slots, then again after one slave leaves and after
// slave n joins, and reports speed, balance and the share of keys moved.
func Assign(opts AssignOptions) (AssignReport, error) {
	opts.defaults()
	if err := opts.Validate(); err != nil {
		return AssignReport{}, fmt.Errorf("bench assign: %w", err)
	}
	keys := fingerprints(opts.Keys)
	report := AssignReport{
		Options:    opts,
		IdealLeave: 1 / float64(opts.Slaves),
		IdealJoin:  1 / float64(opts.Slaves+1),
	}
	for _, s := range schemes() {
		res, err := measure(s, opts, keys)
		if err != nil {
			return AssignReport{}, fmt.Errorf("bench assign %s: %w", s.name, err)
		}
		report.Results = append(report.Results, res)
	}
	return report, nil
}

// measure fills one scheme's row.
func measure(s scheme, opts AssignOptions, keys [][]byte) (AssignResult, error) {
	ids := idRange(0, opts.Slaves)
	leaving := opts.Slaves / 3
	if s.lastOnly {
		leaving = opts.Slaves - 1
	}
	tables := [][]int{ids, slices.Delete(slices.Clone(ids), leaving, leaving+1), idRange(0, opts.Slaves+1)}
	routes := make([][]int32, len(tables))
	res := AssignResult{Scheme: s.name, Note: fmt.Sprintf("slave %d leaves; %s", leaving, s.note)}
	for i, table := range tables {
		r, err := s.build(opts.Slots, table)
		if err != nil {
			return res, err
		}
		var elapsed time.Duration
		routes[i], elapsed = routeAll(r, keys)
		if i == 0 {
			res.RoutesPerSec = float64(len(keys)) / elapsed.Seconds()
		}
	}
	res.Balance = balance(routes[0], opts.Slaves)
	res.MovedOnLeave = moved(routes[0], routes[1])
	res.MovedOnJoin = moved(routes[0], routes[2])
	return res, nil
}

// routeAll routes every key and times it.
func routeAll(r router, keys [][]byte) ([]int32, time.Duration) {
	out := make([]int32, len(keys))
	start := time.Now()
	for i, k := range keys {
		out[i] = int32(r(k))
	}
	return out, time.Since(start)
}

// balance is the largest count of keys on one slave over the mean.
func balance(routes []int32, slaves int) float64 {
	count := make(map[int32]int)
	peak := 0
	for _, id := range routes {
		count[id]++
		peak = max(peak, count[id])
	}
	return float64(peak) / (float64(len(routes)) / float64(slaves))
}

// moved is the share of keys routed differently.
func moved(before, after []int32) float64 {
	n := 0
	for i := range before {
		if before[i] != after[i] {
			n++
		}
	}
	return float64(n) / float64(len(before))
}

// fingerprints returns n SHA1 fingerprints of distinct URLs.
func fingerprints(n int) [][]byte {
	buf := make([]byte, 0, n*sha1.Size)
	keys := make([][]byte, n)
	url := []byte("https://example.com/item/")
	for i := range keys {
		sum := sha1.Sum(strconv.AppendInt(url, int64(i), 10))
		buf = append(buf, sum[:]...)
		keys[i] = buf[len(buf)-sha1.Size:]
	}
	return keys
}

// idRange returns lo..hi-1.
func idRange(lo, hi int) []int {
	ids := make([]int, 0, hi-lo)
	for id := lo; id < hi; id++ {
		ids = append(ids, id)
	}
	return ids
}

// Args are the `crawler-bench assign` flags that reproduce o.
func (o AssignOptions) Args() []string {
	o.defaults()
	return []string{"--slots", strconv.Itoa(o.Slots), "--slaves", strconv.Itoa(o.Slaves), "--keys", strconv.Itoa(o.Keys)}
}

// WriteAssign prints the report's table in format f.
func WriteAssign(w io.Writer, f Format, r AssignReport) error {
	return WriteTables(w, f, AssignTable(r))
}

// AssignTable is the assigner comparison as a table.
func AssignTable(r AssignReport) Table {
	o := r.Options
	t := Table{
		Caption: fmt.Sprintf("Assigner: a=%d slots, n=%d slaves (ids 0-%d), %d keys (SHA1 URL fingerprints); join = slave %d. "+
			"Ideal share moved: leave %.2f%% (1/n), join %.2f%% (1/(n+1)).",
			o.Slots, o.Slaves, o.Slaves-1, o.Keys, o.Slaves, 100*r.IdealLeave, 100*r.IdealJoin),
		Header: []string{"scheme", "routes/s", "max/mean", "moved on leave", "moved on join", "note"},
		Notes:  []string{"routes/s: one goroutine; max/mean: the most loaded slave's keys over the mean."},
	}
	for _, res := range r.Results {
		t.AddRow(res.Scheme, fmt.Sprintf("%.2fM", res.RoutesPerSec/1e6), fmt.Sprintf("%.4f", res.Balance),
			fmt.Sprintf("%.2f%% (%.2fx)", 100*res.MovedOnLeave, res.MovedOnLeave/r.IdealLeave),
			fmt.Sprintf("%.2f%% (%.2fx)", 100*res.MovedOnJoin, res.MovedOnJoin/r.IdealJoin), res.Note)
	}
	return t
}

// keyUint64 is the first 8 bytes of a fingerprint, for the schemes that
// take a 64-bit key hash.
func keyUint64(key []byte) uint64 { return binary.BigEndian.Uint64(key) }

// schemes are the routing schemes the assign bench compares.
func schemes() []scheme {
	return []scheme{
		{name: "two-level + rendezvous (ours)", note: "first level, then weighted HRW", build: assigner(assign.ModeRendezvous)},
		{name: "two-level + live[h%n] (paper)", note: "seed 004's literal second level", build: assigner(assign.ModePaper)},
		{name: "jump consistent hash", note: "can only remove the highest bucket", build: jump, lastOnly: true},
		{name: "hash ring, 100 vnodes", note: "ketama-style ring", build: ring(100)},
		{name: "hash ring, 160 vnodes", note: "ketama-style ring", build: ring(160)},
	}
}

// assigner builds a router on package assign, every weight 1.
func assigner(mode assign.Mode) func(int, []int) (router, error) {
	return func(slots int, ids []int) (router, error) {
		a, err := assign.New(assign.Options{Slots: slots, Mode: mode})
		if err != nil {
			return nil, err
		}
		table := assign.Table{Version: 1}
		for _, id := range ids {
			table.Nodes = append(table.Nodes, assign.Node{ID: id, Weight: 1})
		}
		snap, err := a.Snapshot(table)
		if err != nil {
			return nil, err
		}
		return func(key []byte) int {
			id, _ := snap.Route(key)
			return id
		}, nil
	}
}

// jump is Lamping and Veach's jump consistent hash over buckets 0..n-1,
// bucket i being ids[i].
func jump(_ int, ids []int) (router, error) {
	n := int64(len(ids))
	return func(key []byte) int {
		k := keyUint64(key)
		b, j := int64(-1), int64(0)
		for j < n {
			b = j
			k = k*2862933555777941757 + 1
			j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((k>>33)+1)))
		}
		return ids[b]
	}, nil
}

// ring builds a consistent-hash ring with vnodes points per slave: a key
// goes to the first point at or after its hash, wrapping around.
func ring(vnodes int) func(int, []int) (router, error) {
	return func(_ int, ids []int) (router, error) {
		type point struct {
			hash uint64
			id   int
		}
		points := make([]point, 0, vnodes*len(ids))
		for _, id := range ids {
			for v := range vnodes {
				points = append(points, point{fnv64("slave-" + strconv.Itoa(id) + "-" + strconv.Itoa(v)), id})
			}
		}
		slices.SortFunc(points, func(a, b point) int { return cmp.Compare(a.hash, b.hash) })
		return func(key []byte) int {
			h := keyUint64(key)
			i, _ := slices.BinarySearchFunc(points, h, func(p point, h uint64) int { return cmp.Compare(p.hash, h) })
			return points[i%len(points)].id
		}, nil
	}
}

// fnv64 is FNV-1a with a final avalanche, to place ring points.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(s) {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}
