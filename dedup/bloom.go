package dedup

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/crawler-dev/crawler/canon"
)

// bloomShape is the sizing of every slice of one bloom filter.
type bloomShape struct {
	gran, window int64   // milliseconds
	lookback     int64   // L = window / granularity; a check reads L+1 slices
	capacity     int64   // n, fingerprints per slice
	sliceErr     float64 // ε / (L+1)
	blocks       int     // B, Redis strings per slice
	blockLines   uint64  // lines of lineBytes per block
	k            int     // bits per fingerprint, all in one line
}

// layoutTag names the layout of the slices: two filters with the same tag
// read and write the same bits for a fingerprint.
func (s bloomShape) layoutTag() string {
	sum := xxhash.Sum64String(fmt.Sprintf("g%d b%d l%d k%d w%d", s.gran, s.blocks, s.blockLines, s.k, lineBits))
	return strconv.FormatUint(sum&0xffffffff, 36)
}

// newBloomShape sizes the slices: each holds Capacity at ErrorRate/(L+1),
// since a check's false positives add up over the L+1 slices it reads. The
// fewest lines that reach that rate are split into blocks of at most
// MaxBlockBits, and each block is then grown to fill the allocator size
// class it occupies anyway, which lowers the rate for free; k is chosen
// for the final size.
//
// Sizing takes tens of milliseconds at the default capacity (a search over
// lines and hash counts), and a job's options are sized several times as
// it is checked, estimated and opened, so each shape is worked out once
// per process and remembered (a few dozen bytes per distinct sizing).
func newBloomShape(o Options) bloomShape {
	key := shapeKey{gran: o.Granularity, window: o.Window, capacity: o.Capacity, errorRate: o.ErrorRate, maxBlockBits: o.MaxBlockBits}
	if s, ok := shapes.Load(key); ok {
		return s.(bloomShape)
	}
	s := sizeBloom(o)
	shapes.Store(key, s)
	return s
}

// shapeKey is what a bloomShape depends on.
type shapeKey struct {
	gran, window time.Duration
	capacity     int64
	errorRate    float64
	maxBlockBits uint64
}

// shapes remembers newBloomShape's results by shapeKey.
var shapes sync.Map

// sizeBloom works out newBloomShape's result.
func sizeBloom(o Options) bloomShape {
	s := bloomShape{gran: o.Granularity.Milliseconds(), window: o.Window.Milliseconds(), capacity: o.Capacity}
	s.lookback = s.window / s.gran
	s.sliceErr = o.ErrorRate / float64(s.lookback+1)
	lines := linesFor(o.Capacity, s.sliceErr)
	maxLines := o.MaxBlockBits / lineBits
	s.blocks = int((lines + maxLines - 1) / maxLines)
	s.blockLines = fillClass((lines+uint64(s.blocks)-1)/uint64(s.blocks), maxLines)
	s.k, _ = bestHashes(s.bits(), o.Capacity)
	return s
}

// bits is m, the bits of one slice.
func (s bloomShape) bits() uint64 { return uint64(s.blocks) * s.blockLines * lineBits }

// keysPerCall is the most keys one call names: every block of L+4
// granules (see bloomMode.granules).
func (s bloomShape) keysPerCall() int64 { return (s.lookback + 4) * int64(s.blocks) }

// blockBytes is the length of one block's Redis string.
func (s bloomShape) blockBytes() uint64 { return s.blockLines * lineBytes }

// granule is the index of the slice that holds time t (unix ms).
func (s bloomShape) granule(ms int64) int64 {
	return floorDiv(ms, s.gran)
}

// position is where a fingerprint lives in every slice: its block and the
// byte range of its line in that block (as GETRANGE wants it).
type position struct {
	block    int
	from, to uint64
}

// spot is a fingerprint's position with its k bits in the line, two bytes
// each: the byte's index in the line and the bit's mask in that byte (most
// significant bit first, as GETBIT counts), sorted by bit. The script and
// the filter's copies of slices (image) both read the bits from here, so
// they cannot disagree on where a fingerprint lives.
type spot struct {
	block int
	from  uint64
	pairs []byte
}

// spots locates every fingerprint of fps.
func (s bloomShape) spots(fps []canon.Fingerprint) []spot {
	buf := make([]byte, 0, len(fps)*2*s.k)
	out := make([]spot, len(fps))
	for i, fp := range fps {
		start := len(buf)
		var p position
		p, buf = s.locate(buf, fp)
		out[i] = spot{block: p.block, from: p.from, pairs: buf[start:len(buf):len(buf)]}
	}
	return out
}

// line names sp's line in its block, the same in every granule.
func (sp spot) line() uint64 { return uint64(sp.block)<<32 | sp.from/lineBytes }

// locate returns fp's position, appending its bits to dst. The block comes
// from bytes 16..19 of the SHA1, the line from bytes 0..7, and the k
// distinct bits from a splitmix64 stream seeded with bytes 8..15, 11 bits
// at a time.
func (s bloomShape) locate(dst []byte, fp canon.Fingerprint) (position, []byte) {
	block := binary.BigEndian.Uint32(fp[16:20]) % uint32(s.blocks)
	line := binary.BigEndian.Uint64(fp[0:8]) % s.blockLines
	var used [lineBits / 64]uint64
	seed := binary.BigEndian.Uint64(fp[8:16])
	var word uint64
	left := 0
	for n := 0; n < s.k; {
		if left < posBits {
			seed, word, left = splitmix64(seed)
		}
		bit := word & (lineBits - 1)
		word, left = word>>posBits, left-posBits
		if used[bit/64]&(1<<(bit%64)) != 0 {
			continue
		}
		used[bit/64] |= 1 << (bit % 64)
		n++
	}
	for w, u := range used { // in bit order, so the pairs come sorted by byte
		for ; u != 0; u &= u - 1 {
			bit := w*64 + bits.TrailingZeros64(u)
			dst = append(dst, byte(bit/8), 0x80>>(bit%8))
		}
	}
	from := line * lineBytes
	return position{block: int(block), from: from, to: from + lineBytes - 1}, dst
}

// splitmix64 advances the state and returns it with 64 bits of output.
func splitmix64(state uint64) (next, out uint64, n int) {
	state += 0x9e3779b97f4a7c15
	z := state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return state, z ^ (z >> 31), 64
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func unixMs(t time.Time) int64 { return t.UnixMilli() }
