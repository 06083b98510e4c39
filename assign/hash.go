package assign

import "encoding/binary"

// golden is 2^64 divided by the golden ratio, the usual odd mixing constant.
const golden = 0x9e3779b97f4a7c15

// fmix64 is MurmurHash3's 64-bit finalizer: a bijection with full
// avalanche, so nearby inputs give unrelated outputs.
func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb93fe53b8e63
	x ^= x >> 33
	return x
}

// keyHash hashes all of key into two 64-bit values: h1 picks the
// first-level slot and h2's top 53 bits are the first-level acceptance draw
// v. Every master computes the same values: no random seed is involved.
func keyHash(key []byte) (h1, h2 uint64) {
	h := uint64(len(key)) * golden
	for len(key) >= 8 {
		h = fmix64(h ^ binary.LittleEndian.Uint64(key))
		key = key[8:]
	}
	var tail uint64
	for i, b := range key {
		tail |= uint64(b) << (8 * i)
	}
	h1 = fmix64(h ^ tail ^ 0x5bd1e995)
	return h1, fmix64(h1 + golden)
}

// raceBase is the key's input to the rendezvous draws, kept apart from the
// slot (h1) and the acceptance draw (h2) by one more mixing round.
func raceBase(h1, h2 uint64) uint64 {
	return fmix64(h2 ^ (h1 << 1) ^ golden)
}

// nodeSeed is node id's constant for the rendezvous draws.
func nodeSeed(id int) uint64 { return fmix64(uint64(id)*golden + 1) }

// draw is node seed's pseudo-random 64-bit draw for the key with race base
// base.
func draw(base, seed uint64) uint64 { return fmix64(base ^ seed) }

// unit maps a draw to u in (0,1) from its top 53 bits; u is never 0 or 1,
// so ln(u) is finite and negative.
func unit(d uint64) float64 {
	return (float64(d>>11) + 0.5) / (1 << 53)
}
