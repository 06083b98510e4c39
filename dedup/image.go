package dedup

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// loadChunk is the most bytes one GETRANGE reads when a slice is copied
// into process memory: a 25 MB slice read whole would hold Redis for the
// copy and fill its output buffer. A variable for tests.
var loadChunk uint64 = 1 << 20

// wordsPerLine is the 64-bit words of one line.
const wordsPerLine = lineBytes / 8

// image is a Filter's copy of one granule's bloom slice in process memory,
// block by block. A block is a run of 64-bit words holding its bytes in
// big-endian order, so byte i of a line is byte i%8 of word i/8 counted
// from the most significant end, and a mask of that byte (GETBIT's order)
// is the same bit of the word.
//
// A copy only ever gains bits, as the slice in Redis does, so a
// fingerprint found in it is in Redis too. It holds exactly what Redis
// holds when the slice is sealed (nobody writes it any more) or owned (see
// sliceCache). Words are read and set atomically: a live copy is updated
// while other calls read it.
type image struct {
	granule int64
	blocks  [][]uint64 // nil: the block does not exist in Redis (all zeros)
	bytes   int64      // the memory blocks hold
	owned   atomic.Bool
	// claimedAt is when the filter last made it owned (guarded by
	// sliceCache.claimMu).
	claimedAt time.Time
}

// newImage returns the copy of granule g's slice, every block allocated
// when live (it is written as the slice is) and none otherwise (a sealed
// copy allocates the blocks it finds).
func newImage(s bloomShape, g int64, live bool) *image {
	im := &image{granule: g, blocks: make([][]uint64, s.blocks)}
	if live {
		for b := range im.blocks {
			im.blocks[b] = make([]uint64, s.blockBytes()/8)
		}
		im.bytes = int64(s.blocks) * int64(s.blockBytes())
	}
	return im
}

// wordBit is where bit pair (byte index in line, mask) lies among the
// line's words.
func wordBit(i, mask byte) (word int, bit uint64) {
	return int(i / 8), uint64(mask) << (56 - 8*(i%8))
}

// has reports whether the copy holds every bit of sp.
func (im *image) has(sp spot) bool {
	words := im.blocks[sp.block]
	if words == nil {
		return false
	}
	base := int(sp.from / 8)
	for q := 0; q < len(sp.pairs); q += 2 {
		w, bit := wordBit(sp.pairs[q], sp.pairs[q+1])
		if atomic.LoadUint64(&words[base+w])&bit == 0 {
			return false
		}
	}
	return true
}

// add sets sp's bits, after Redis confirmed it set them too.
func (im *image) add(sp spot) {
	words := im.blocks[sp.block]
	if words == nil {
		return // sealed copies are never written
	}
	base := int(sp.from / 8)
	for q := 0; q < len(sp.pairs); q += 2 {
		w, bit := wordBit(sp.pairs[q], sp.pairs[q+1])
		atomic.OrUint64(&words[base+w], bit)
	}
}

// appendLineWith appends sp's line as the copy holds it, with sp's bits
// set: the bytes an owner writes in place of the line.
func (im *image) appendLineWith(dst []byte, sp spot) []byte {
	words := im.blocks[sp.block]
	base := int(sp.from / 8)
	start := len(dst)
	for w := range wordsPerLine {
		dst = binary.BigEndian.AppendUint64(dst, atomic.LoadUint64(&words[base+w]))
	}
	line := dst[start:]
	for q := 0; q < len(sp.pairs); q += 2 {
		line[sp.pairs[q]] |= sp.pairs[q+1]
	}
	return dst
}

// load reads every block of the slice from Redis (keys, one per block) in
// chunks of loadChunk, setting in the copy every bit it finds. A sealed
// copy allocates only the blocks that exist.
func (im *image) load(ctx context.Context, rdb redis.UniversalClient, keys []string, blockBytes uint64) error {
	for b, key := range keys {
		for off := uint64(0); off < blockBytes; off += loadChunk {
			chunk, err := rdb.GetRange(ctx, key, int64(off), int64(min(off+loadChunk, blockBytes))-1).Result()
			if err != nil {
				return fmt.Errorf("dedup load slice: redis: %w", err)
			}
			if chunk == "" {
				break // no such key, or shorter than the layout: the rest is zeros
			}
			im.merge(b, off, chunk, blockBytes)
		}
	}
	return nil
}

// merge sets in block b the bits of chunk, the block's bytes from off. A
// sealed copy allocates a block at its first bit set: a slice created
// ahead and never written takes no memory.
func (im *image) merge(b int, off uint64, chunk string, blockBytes uint64) {
	var pad [8]byte
	for w := 0; 8*w < len(chunk); w++ {
		n := copy(pad[:], chunk[8*w:])
		clear(pad[n:])
		v := binary.BigEndian.Uint64(pad[:])
		if v == 0 {
			continue
		}
		if im.blocks[b] == nil {
			im.blocks[b] = make([]uint64, blockBytes/8)
			im.bytes += int64(blockBytes)
		}
		atomic.OrUint64(&im.blocks[b][off/8+uint64(w)], v)
	}
}
