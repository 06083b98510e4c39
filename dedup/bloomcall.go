package dedup

import (
	"encoding/binary"
)

// bloomMode builds the bloom scripts' keys and arguments.
type bloomMode struct {
	keys  keys
	shape bloomShape
	cache *sliceCache // nil: every slice is checked in Redis
}

// The kinds of fingerprint lua/bloom.lua takes.
const (
	kindCheck byte = 0 // read its line in Redis
	kindBlind byte = 1 // write the line given: the owner's copy with its bits set
)

// bloomHeader is the number of mode arguments before the fingerprints'
// own (two each).
const bloomHeader = 17

// bloomArgs are the header's arguments that vary by call.
type bloomArgs struct {
	nowMs, lo, hi, lookback int64
	packed                  []byte
	res                     resolution
	checks                  []byte // the CHECK fingerprints' places, 4 bytes each
	create, claim           bool
}

// plan lays out a check of b at time nowMs (< 0: the server's clock, with
// guess as the local estimate of it). It names only the blocks b's
// fingerprints fall in, for granules lo..hi: exactly g-L..g+1 for a known
// time, a granule more on each side for a guessed one. So a call names at
// most (L+3) × min(len(fps), Blocks) block keys, however finely slices are
// split, and a writer key per granule.
//
// With a cache, fingerprints found in the filter's copies of slices are
// answered here and not passed, and the first fingerprint of each line
// that an owned current slice does not hold is passed with its new line,
// for the script to write without reading (kindBlind); the others are
// listed apart too (checks), so that the script's loop over the blind ones
// needs to decode nothing.
func (m bloomMode) plan(b *batch, nowMs, guess int64) plan {
	s := m.shape
	r := m.cache.resolve(nowMs, guess)
	p := plan{owned: r.owned, sent: make([]int, 0, len(b.spots))}
	var written lineSet
	if b.write && r.current != nil {
		written = newLineSet(len(b.spots))
	}
	var lines, checks []byte
	if written != nil {
		lines = make([]byte, 0, len(b.spots)*lineBytes)
	}
	found := r.found(b.spots)
	for i, sp := range b.spots {
		switch {
		case found != nil && found[i]:
			p.resolved++
			continue
		case written != nil && written.add(sp.line()):
			lines = r.current.appendLineWith(lines, sp)
		case written != nil:
			checks = binary.BigEndian.AppendUint32(checks, uint32(len(p.sent)+1))
		}
		p.sent = append(p.sent, i)
	}
	m.cache.count(p.resolved, len(lines)/lineBytes)
	args, packed, blocks := m.fpArgs(b.spots, p.sent, checks, lines, written != nil)
	n := len(p.sent)
	if !r.active() {
		p.sent = nil // all of them, in order
	}
	lo, hi := m.granules(nowMs, guess, s.lookback)
	a := bloomArgs{nowMs: nowMs, lo: lo, hi: hi, lookback: s.lookback, packed: packed, res: r, checks: checks}
	p.call = m.layout(n, a, blocks, args)
	return p
}

// fpArgs lays out the fingerprints passed (sent, indexes into spots): the
// header's room, then each one's two arguments, and the packed spots.
// With blind, the places in checks are the CHECK ones and the others take
// lines in turn; without, all are CHECK. Arguments are pointers into
// arrays made once per call, which go-redis writes without boxing each
// value.
func (m bloomMode) fpArgs(spots []spot, sent []int, checks, lines []byte, blind bool) (args []any, packed []byte, blocks []int) {
	args = make([]any, bloomHeader, bloomHeader+2*len(sent))
	packed = make([]byte, 0, len(sent)*(3+2*m.shape.k))
	offsets := make([]uint64, 2*len(sent))
	news := make([]string, len(lines)/lineBytes)
	all := string(lines)
	for j := range news {
		news[j] = all[j*lineBytes : (j+1)*lineBytes]
	}
	var slots blockSlots
	for j, i := range sent {
		sp, kind := spots[i], kindBlind
		offsets[2*j] = sp.from
		if !blind || len(checks) > 0 && int(binary.BigEndian.Uint32(checks)) == j+1 {
			if blind {
				checks = checks[4:]
			}
			kind = kindCheck
			offsets[2*j+1] = sp.from + lineBytes - 1
			args = append(args, &offsets[2*j], &offsets[2*j+1])
		} else {
			args = append(args, &offsets[2*j], &news[0])
			news = news[1:]
		}
		packed = appendSpot(packed, slots.slot(sp.block), sp, kind)
	}
	return args, packed, slots.blocks
}

// lineSet is a set of lines (spot.line) for one call: open addressing in a
// power-of-two table, cheaper than a map at a thousand lines a call.
type lineSet []uint64

func newLineSet(n int) lineSet {
	size := 4
	for size < 2*n {
		size <<= 1
	}
	return make(lineSet, size)
}

// add adds line and reports whether it was not in the set.
func (s lineSet) add(line uint64) bool {
	key, mask := line+1, uint64(len(s)-1) // 0 marks a free slot
	for h := (key * 0x9e3779b97f4a7c15 >> 32) & mask; ; h = (h + 1) & mask {
		switch s[h] {
		case 0:
			s[h] = key
			return true
		case key:
			return false
		}
	}
}

// appendSpot packs one fingerprint as lua/bloom.lua reads it.
func appendSpot(dst []byte, slot int, sp spot, kind byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(slot))
	dst = append(dst, kind)
	return append(dst, sp.pairs...)
}

// preparePlan lays out Prepare: every block of granules g and g+1 (a
// granule more on each side for a guessed time), created when create is
// set; with claim, the filter becomes the writer of the current slice.
func (m bloomMode) preparePlan(nowMs, guess int64, create, claim bool) plan {
	blocks := make([]int, m.shape.blocks)
	for b := range blocks {
		blocks[b] = b
	}
	lo, hi := m.granules(nowMs, guess, 0)
	a := bloomArgs{nowMs: nowMs, lo: lo, hi: hi, res: resolution{ggo: -1}, create: create, claim: claim}
	return plan{call: m.layout(0, a, blocks, make([]any, bloomHeader))}
}

// layout is the keys and arguments lua/bloom.lua reads: blocks' keys for
// granules lo..hi, granule-major, and their writer keys, then the mode
// arguments, whose header it fills in args[:bloomHeader]; the
// fingerprints' own follow it.
func (m bloomMode) layout(n int, a bloomArgs, blocks []int, args []any) scriptCall {
	s := m.shape
	c := scriptCall{n: n, modeKeys: make([]string, 0, int(a.hi-a.lo+1)*(len(blocks)+1)), modeArgs: args}
	for g := a.lo; g <= a.hi; g++ {
		for _, b := range blocks {
			c.modeKeys = append(c.modeKeys, m.keys.slice(g, b))
		}
	}
	for g := a.lo; g <= a.hi; g++ {
		c.modeKeys = append(c.modeKeys, m.keys.writer(g))
	}
	copy(args, []any{a.nowMs, a.lo, s.gran, s.window, a.lookback, len(blocks), s.k, s.blockBytes()*8 - 1,
		lineBytes, a.packed, a.res.ggo, a.res.res, m.cache.writerID(), m.cache.margin(),
		flag(a.create), flag(a.claim), a.checks})
	return c
}

// granules is the range of granules a call names keys for.
func (m bloomMode) granules(nowMs, guess, lookback int64) (lo, hi int64) {
	if nowMs >= 0 {
		g := m.shape.granule(nowMs)
		return g - lookback, g + 1
	}
	g := m.shape.granule(guess)
	return g - lookback - 1, g + 2
}

// blockSlots numbers the distinct blocks of one call in order of first
// use.
type blockSlots struct {
	blocks []int
	index  map[int]int
}

// slot returns block's number, giving it the next one on first use.
func (s *blockSlots) slot(block int) int {
	if len(s.blocks) == 1 && s.blocks[0] == block { // the common case: one block per slice
		return 0
	}
	if s.index == nil {
		s.index = make(map[int]int)
		for j, b := range s.blocks {
			s.index[b] = j
		}
	}
	j, ok := s.index[block]
	if !ok {
		j = len(s.blocks)
		s.index[block] = j
		s.blocks = append(s.blocks, block)
	}
	return j
}
