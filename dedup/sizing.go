package dedup

import (
	"math"
	"math/bits"
	"time"
)

// A slice is a blocked Bloom filter: all k bits of a fingerprint lie in one
// line of lineBytes, so a check reads one GETRANGE per slice and an insert
// writes one SETRANGE, instead of k GETBITs and k SETBITs (each redis.call
// costs about as much as the bit work of a whole line). 1024-bit lines need
// about 11% more bits than a classic Bloom filter at the same rate (512-bit
// ones about 15%); larger lines need fewer, but reading and rewriting them
// in Lua measured slower: 256-byte lines took 1.3x as long per insert.
const (
	lineBytes = 128
	lineBits  = 8 * lineBytes
	posBits   = 10 // log2(lineBits): bits of one position within a line
)

// Sizing is how a bloom Filter's slices are laid out in Redis, all of it
// computed from the Options alone, so every master agrees on it.
type Sizing struct {
	// Slices is L+1, the slices one check reads.
	Slices int
	// Capacity is the fingerprints one slice holds at SliceErrorRate.
	Capacity int64
	// SliceErrorRate is the configured rate per slice, ErrorRate/Slices.
	SliceErrorRate float64
	// ExpectedSliceErrorRate is the rate of a slice holding Capacity with
	// the real Bits, K and line layout; below SliceErrorRate, since each
	// Redis string is grown to fill its allocator size class.
	ExpectedSliceErrorRate float64
	// Bits is m, the bits of one slice (Blocks × BlockBytes × 8).
	Bits uint64
	// Blocks is the Redis strings per slice; BlockBytes the size of each.
	Blocks     int
	BlockBytes int64
	// LineBits is the bits of the line that holds all of a fingerprint's
	// K bits.
	LineBits int
	// K is the bits set per fingerprint.
	K int
}

// Sizing returns the layout of the filter's bloom slices (zero for the
// other modes).
func (f *Filter) Sizing() Sizing {
	b, ok := f.mode.(bloomMode)
	if !ok {
		return Sizing{}
	}
	s := b.shape
	return Sizing{Slices: int(s.lookback + 1), Capacity: s.capacity, SliceErrorRate: s.sliceErr,
		ExpectedSliceErrorRate: BlockedErrorRate(s.bits(), s.capacity, s.k, lineBits),
		Bits:                   s.bits(), Blocks: s.blocks, BlockBytes: int64(s.blockLines * lineBytes),
		LineBits: lineBits, K: s.k}
}

// OptimalBits is the classic Bloom filter size for n elements at
// false-positive rate eps: ceil(n·log2(e)·log2(1/eps)).
func OptimalBits(n int64, eps float64) uint64 {
	return uint64(math.Ceil(float64(n) * math.Log2E * math.Log2(1/eps)))
}

// OptimalHashes is the number of bits per element at rate eps:
// round(log2(1/eps)), at least 1.
func OptimalHashes(eps float64) int {
	return max(1, int(math.Round(math.Log2(1/eps))))
}

// BlockedErrorRate is the false-positive rate of a blocked Bloom filter of
// m bits in lines of line bits holding n elements, each setting k distinct
// bits of one line. The elements per line are Poisson with mean n·line/m;
// a line holding i of them answers a check falsely with about
// (1 - (1 - k/line)^i)^k.
func BlockedErrorRate(m uint64, n int64, k, line int) float64 {
	lambda := float64(n) * float64(line) / float64(m)
	p := math.Exp(-lambda)
	miss := 1 - float64(k)/float64(line)
	sum := 0.0
	for i := 0; i < int(lambda+12*math.Sqrt(lambda)+30); i++ {
		if i > 0 {
			p *= lambda / float64(i)
		}
		sum += p * math.Pow(1-math.Pow(miss, float64(i)), float64(k))
	}
	return sum
}

// bestHashes is the k with the lowest blocked rate for m bits and n
// elements (a little below the classic ln2·m/n).
func bestHashes(m uint64, n int64) (k int, rate float64) {
	k, rate = 1, BlockedErrorRate(m, n, 1, lineBits)
	for j := 2; j <= 48; j++ {
		if r := BlockedErrorRate(m, n, j, lineBits); r < rate {
			k, rate = j, r
		}
	}
	return k, rate
}

// linesFor is the fewest lines whose blocked filter holds n at rate eps.
func linesFor(n int64, eps float64) uint64 {
	lo := max(1, OptimalBits(n, eps)/lineBits)
	hi := 2*lo + 1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, r := bestHashes(mid*lineBits, n); r <= eps {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// allocClass is the jemalloc size class Redis's allocator rounds a request
// of n bytes up to: multiples of 16 up to 128 bytes, then four classes per
// doubling (2^j + i·2^(j-2)), which holds for its large classes too.
func allocClass(n uint64) uint64 {
	if n <= 128 {
		return max(16, (n+15)&^15)
	}
	step := uint64(1) << (63 - bits.LeadingZeros64(n-1) - 2)
	return (n + step - 1) / step * step
}

// sdsOverhead is what Redis allocates around a string of n bytes: the sds
// header of the smallest type that holds n, and the terminating NUL.
func sdsOverhead(n uint64) uint64 {
	switch {
	case n < 1<<8-4:
		return 4
	case n < 1<<16-6:
		return 6
	case n < 1<<32-10:
		return 10
	default:
		return 18
	}
}

// fillClass grows a block of lines to the most lines whose allocation still
// fits the size class the block already pays for, capped at maxLines.
func fillClass(lines, maxLines uint64) uint64 {
	bytes := lines * lineBytes
	class := allocClass(bytes + sdsOverhead(bytes))
	fit := (class - sdsOverhead(class)) / lineBytes
	if b := fit * lineBytes; b+sdsOverhead(b) > class {
		fit--
	}
	return min(max(lines, fit), maxLines)
}

// SliceKeys returns the Redis keys of the bloom slice holding time t, one
// per block (nil for the other modes): for tools that inspect slices or,
// like crawler bench dedup, fill them.
func (f *Filter) SliceKeys(t time.Time) []string {
	b, ok := f.mode.(bloomMode)
	if !ok {
		return nil
	}
	return b.keys.blocks(b.shape.granule(unixMs(t)), b.shape.blocks)
}
