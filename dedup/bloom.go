package dedup

import (
	"encoding/binary"
	"math"
	"time"
)

// bloomShape is the sizing of every slice of one bloom filter.
type bloomShape struct {
	gran, window int64   // milliseconds
	lookback     int64   // L = window / granularity; a check reads L+1 slices
	sliceErr     float64 // ε / (L+1)
	bits         uint64  // m, bits per slice
	blocks       int     // B, Redis strings per slice
	blockBits    uint64  // bits per block, ceil(m / B)
	k            int     // bits per fingerprint
}

// newBloomShape sizes the slices: each holds Capacity at ErrorRate/(L+1),
// since a check's false positives add up over the L+1 slices it reads.
func newBloomShape(o Options) bloomShape {
	s := bloomShape{gran: o.Granularity.Milliseconds(), window: o.Window.Milliseconds()}
	s.lookback = s.window / s.gran
	s.sliceErr = o.ErrorRate / float64(s.lookback+1)
	s.bits = OptimalBits(o.Capacity, s.sliceErr)
	s.k = OptimalHashes(s.sliceErr)
	s.blocks = int((s.bits + o.MaxBlockBits - 1) / o.MaxBlockBits)
	s.blockBits = (s.bits + uint64(s.blocks) - 1) / uint64(s.blocks)
	return s
}

// OptimalBits is the Bloom filter size for n elements at false-positive
// rate eps: ceil(n·log2(e)·log2(1/eps)).
func OptimalBits(n int64, eps float64) uint64 {
	return uint64(math.Ceil(float64(n) * math.Log2E * math.Log2(1/eps)))
}

// OptimalHashes is the number of bits per element at rate eps:
// round(log2(1/eps)), at least 1.
func OptimalHashes(eps float64) int {
	return max(1, int(math.Round(math.Log2(1/eps))))
}

// ExpectedErrorRate is the false-positive rate of one Bloom filter of m
// bits holding n elements with k bits each: (1 - e^(-kn/m))^k.
func ExpectedErrorRate(m uint64, n int64, k int) float64 {
	return math.Pow(1-math.Exp(-float64(k)*float64(n)/float64(m)), float64(k))
}

// granule is the index of the slice that holds time t (unix ms).
func (s bloomShape) granule(ms int64) int64 {
	return floorDiv(ms, s.gran)
}

// appendPositions appends the fingerprint's block and k bit offsets as
// big-endian uint32s. h1 and h2 are the first two 64-bit words of the
// SHA1 (enhanced double hashing, Dillinger & Manolios); the block comes
// from the last 32 bits, which the bit offsets do not use.
func (s bloomShape) appendPositions(dst []byte, fp Fingerprint) []byte {
	h1 := binary.BigEndian.Uint64(fp[0:8])
	h2 := binary.BigEndian.Uint64(fp[8:16])
	block := binary.BigEndian.Uint32(fp[16:20]) % uint32(s.blocks)
	dst = binary.BigEndian.AppendUint32(dst, block)
	x, y := h1%s.blockBits, h2%s.blockBits
	for i := 0; i < s.k; i++ {
		dst = binary.BigEndian.AppendUint32(dst, uint32(x))
		x = (x + y) % s.blockBits
		y = (y + uint64(i)) % s.blockBits
	}
	return dst
}

// bloomMode builds the bloom scripts' keys and arguments.
type bloomMode struct {
	keys  keys
	shape bloomShape
}

// call prepares a script run for fps at time nowMs (< 0: the server's
// clock, with guess as the local estimate of it). The keys span granules
// lo..hi: exactly g-L..g+1 for a known time, a granule more on each side
// for a guessed one.
func (m bloomMode) call(fps []Fingerprint, nowMs, guess int64) scriptCall {
	lo, hi := m.granules(nowMs, guess)
	c := scriptCall{n: len(fps)}
	for g := lo; g <= hi; g++ {
		for b := 0; b < m.shape.blocks; b++ {
			c.modeKeys = append(c.modeKeys, m.keys.slice(g, b))
		}
	}
	packed := make([]byte, 0, len(fps)*4*(m.shape.k+1))
	for _, fp := range fps {
		packed = m.shape.appendPositions(packed, fp)
	}
	s := m.shape
	c.modeArgs = []any{nowMs, lo, s.gran, s.window, s.lookback, s.blocks, s.k, s.blockBits, packed}
	return c
}

func (m bloomMode) granules(nowMs, guess int64) (lo, hi int64) {
	if nowMs >= 0 {
		g := m.shape.granule(nowMs)
		return g - m.shape.lookback, g + 1
	}
	g := m.shape.granule(guess)
	return g - m.shape.lookback - 1, g + 2
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func unixMs(t time.Time) int64 { return t.UnixMilli() }
