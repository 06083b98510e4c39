package neardup

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// bandValues is the number of values of one band: 16 bits.
const bandValues = 1 << 16

// none ends a chain of entries.
const none = -1

// genLog is what a caller holds of one generation's log: the bytes read so
// far, and how many of them (whole records) the mirror has replayed.
type genLog struct {
	buf    []byte
	parsed int
}

// entry is an add record as the mirror holds it.
type entry struct {
	hash    uint64
	expires int64 // unix ms
	// log (0: previous, 1: current generation) and at say where the ID
	// is: logs[log].buf[at : at+n].
	at   int32
	n    uint16
	log  uint8
	dead bool // replaced or dropped by a later record
	// next is, per band, the next entry with the same band value.
	next [4]int32
}

// mirror is a caller's copy of the index: the logs of the current
// generation and the one before, replayed into entries chained by band
// value (the pigeonhole search needs only a hash's own 4 band values) and
// found by ID. Entries replaced or dropped stay in the chains, marked
// dead, until the mirror moves to the next generation and replays the
// two logs it keeps.
type mirror struct {
	gen     int64 // the current generation; < 0 before the first sync
	logs    [2]genLog
	entries []entry
	heads   []int32          // 4 × bandValues chain heads, band-major
	byKey   map[uint64]int32 // xxhash of an ID -> its live entry
}

func newMirror() *mirror {
	m := &mirror{gen: -1}
	m.reset()
	return m
}

// forget drops everything the mirror holds, as before its first sync, so
// that the next sync reads the logs whole.
func (m *mirror) forget() {
	m.logs, m.gen = [2]genLog{}, -1
	m.reset()
}

// reset empties the replayed state (the logs are kept).
func (m *mirror) reset() {
	m.entries = m.entries[:0]
	if m.heads == nil {
		m.heads = make([]int32, 4*bandValues)
	}
	for i := range m.heads {
		m.heads[i] = none
	}
	m.byKey = map[uint64]int32{}
	for i := range m.logs {
		m.logs[i].parsed = 0
	}
}

// headBytes is how many of a log's first bytes tell it from another: its
// first record's kind, hash, expiry and the start of its ID.
const headBytes = 32

// head returns the first bytes held of log l, up to headBytes.
func (m *mirror) head(l int) []byte {
	b := m.logs[l].buf
	return b[:min(len(b), headBytes)]
}

// mapBytesPerEntry estimates what one entry of byKey costs: its key and
// value, a control byte, and the table's free slots.
const mapBytesPerEntry = 24

// bytes estimates the memory the mirror takes: its logs, entries, chain
// heads and ID table.
func (m *mirror) bytes() int64 {
	n := int64(cap(m.logs[0].buf) + cap(m.logs[1].buf))
	n += int64(cap(m.entries)) * int64(unsafe.Sizeof(entry{}))
	n += int64(len(m.heads)) * 4
	return n + int64(len(m.byKey))*mapBytesPerEntry
}

// band is band i of h (0 = the top 16 bits).
func band(i int, h uint64) int { return int(uint16(h >> (48 - 16*i))) }

// id returns the ID of entry e.
func (m *mirror) id(e *entry) []byte {
	return m.logs[e.log].buf[e.at : int(e.at)+int(e.n)]
}

// live returns the index of id's entry, or none.
func (m *mirror) live(id string) int32 {
	i, ok := m.byKey[xxhash.Sum64String(id)]
	if !ok || string(m.id(&m.entries[i])) != id {
		return none
	}
	return i
}

// sync moves the mirror to generation gen and appends the tails the commit
// script replied for the previous and the current log (from: where each
// starts), then replays what is new.
func (m *mirror) sync(gen int64, from [2]int64, tails [2][]byte) error {
	replay := false
	switch {
	case gen == m.gen:
	case gen == m.gen+1 && m.gen >= 0:
		m.logs[0], m.logs[1] = m.logs[1], genLog{}
		replay = true
	default:
		m.logs = [2]genLog{}
		replay = true
	}
	m.gen = gen
	for i := range m.logs {
		l := &m.logs[i]
		if from[i] < int64(len(l.buf)) { // the log expired and started again
			*l = genLog{}
			replay = true
		}
		if from[i] != int64(len(l.buf)) {
			return fmt.Errorf("log of generation %d replied from byte %d, held %d", gen-1+int64(i), from[i], len(l.buf))
		}
		l.buf = append(l.buf, tails[i]...)
	}
	// The previous log is final once the current one has records: new
	// bytes of it after that (a clock that went back) are replayed in order.
	if len(tails[0]) > 0 && m.logs[1].parsed > 0 {
		replay = true
	}
	if replay {
		m.reset()
	}
	for i := range m.logs {
		if err := m.replay(uint8(i)); err != nil {
			return fmt.Errorf("log of generation %d: %w", gen-1+int64(i), err)
		}
	}
	return nil
}

// replay applies the whole records of log l not yet applied.
func (m *mirror) replay(l uint8) error {
	log := &m.logs[l]
	for {
		r, idAt, n, err := parseRecord(log.buf[log.parsed:])
		if err != nil {
			return fmt.Errorf("byte %d: %w", log.parsed, err)
		}
		if n == 0 {
			return nil
		}
		m.apply(r, l, int32(log.parsed+idAt), uint16(n-idAt))
		log.parsed += n
	}
}

// apply replays record r, whose ID is at at in log l.
func (m *mirror) apply(r record, l uint8, at int32, n uint16) {
	id := m.logs[l].buf[at : int(at)+int(n)]
	key := xxhash.Sum64(id)
	if i, ok := m.byKey[key]; ok && string(m.id(&m.entries[i])) == string(id) {
		m.entries[i].dead = true
		delete(m.byKey, key)
	}
	if r.kind != kindAdd {
		return
	}
	i := int32(len(m.entries))
	e := entry{hash: r.hash, expires: r.expires, at: at, n: n, log: l}
	for b := range 4 {
		h := &m.heads[b*bandValues+band(b, r.hash)]
		e.next[b], *h = *h, i
	}
	m.entries = append(m.entries, e)
	// Two IDs of one xxhash share the slot: the later one's entry is found
	// by ID, the earlier one stays findable as a near-duplicate until it
	// expires. The odds that any two of n IDs collide are n²/2^65.
	m.byKey[key] = i
}

// candidate is an entry a lookup found.
type candidate struct {
	id       string
	distance int
}

// better reports whether an entry of id at distance d beats c (ties go to
// the smaller ID); c.distance < 0 is no candidate yet.
func (c candidate) better(id []byte, d int) bool {
	return c.distance < 0 || d < c.distance || d == c.distance && string(id) < c.id
}

// closest returns the closest live entry within maxd bits of h whose ID is
// not id and which is not gone.
func (m *mirror) closest(h uint64, id string, now int64, maxd int, gone map[int32]bool) candidate {
	best := candidate{distance: -1}
	for b := range 4 {
		for i := m.heads[b*bandValues+band(b, h)]; i != none; i = m.entries[i].next[b] {
			e := &m.entries[i]
			if e.dead || e.expires <= now {
				continue
			}
			d := bits.OnesCount64(e.hash ^ h)
			if d > maxd || gone[i] {
				continue
			}
			eid := m.id(e)
			if string(eid) != id && best.better(eid, d) {
				best = candidate{id: string(eid), distance: d}
			}
		}
	}
	return best
}
