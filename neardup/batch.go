package neardup

import "math/bits"

// batch decides a call's entries against the mirror, one after another as
// if each were a call of its own, without changing the mirror: what the
// earlier entries of the batch did is kept beside it, and the records to
// append are collected. If the commit finds the mirror was not whole, the
// batch is decided again from scratch.
type batch struct {
	m       *mirror
	now     int64
	expires int64
	maxd    int
	// gone holds the mirror's entries an earlier entry of the batch
	// replaced or dropped; added the entries the batch added, dead once
	// replaced or dropped within it.
	gone    map[int32]bool
	added   []batchEntry
	addedAt map[string]int // ID -> its live entry in added
	records []byte
}

// batchEntry is an entry added by the batch.
type batchEntry struct {
	id   string
	hash uint64
	dead bool
}

// decide returns the results of entries against m at now (unix ms), with
// the records that make them so.
func decide(m *mirror, entries []Entry, now int64, window int64, maxd int) ([]Result, []byte) {
	b := &batch{m: m, now: now, expires: now + window, maxd: maxd, gone: map[int32]bool{},
		addedAt: map[string]int{}}
	out := make([]Result, len(entries))
	for i, e := range entries {
		out[i] = b.offer(e)
	}
	return out, b.records
}

// offer drops e's ID's entry, then finds the closest live entry of another
// ID within maxd bits, or else adds e.
func (b *batch) offer(e Entry) Result {
	had := b.forget(e.ID)
	best := b.m.closest(e.Hash, e.ID, b.now, b.maxd, b.gone)
	for i := range b.added {
		a := &b.added[i]
		if a.dead || a.id == e.ID {
			continue
		}
		if d := bits.OnesCount64(a.hash ^ e.Hash); d <= b.maxd && best.better([]byte(a.id), d) {
			best = candidate{id: a.id, distance: d}
		}
	}
	if best.distance >= 0 {
		if had {
			b.records = appendRecord(b.records, record{kind: kindDrop, id: e.ID})
		}
		return Result{Of: best.id, Distance: best.distance}
	}
	b.addedAt[e.ID] = len(b.added)
	b.added = append(b.added, batchEntry{id: e.ID, hash: e.Hash})
	b.records = appendRecord(b.records, record{kind: kindAdd, hash: e.Hash, expires: b.expires, id: e.ID})
	return Result{Distance: -1}
}

// forget marks id's entry, in the mirror or added by the batch, as gone;
// it reports whether there was one.
func (b *batch) forget(id string) bool {
	had := false
	if i := b.m.live(id); i != none && !b.gone[i] {
		b.gone[i] = true
		had = true
	}
	if i, ok := b.addedAt[id]; ok {
		b.added[i].dead = true
		delete(b.addedAt, id)
		had = true
	}
	return had
}
