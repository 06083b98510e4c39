package dedup

import (
	"math/bits"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// Simhash returns the 64-bit simhash of text over its character bigrams:
// the text is lowercased and stripped of everything but letters and digits
// (runes, so Chinese and Latin text alike), each bigram is hashed with
// xxhash64 and weighted by its count. Texts that differ a little have
// hashes a small Hamming distance apart.
func Simhash(text string) uint64 {
	var v [64]int
	for gram, n := range bigrams(text) {
		h := xxhash.Sum64String(gram)
		for i := range v {
			if h&(1<<i) != 0 {
				v[i] += n
			} else {
				v[i] -= n
			}
		}
	}
	var out uint64
	for i, w := range v {
		if w > 0 {
			out |= 1 << i
		}
	}
	return out
}

// bigrams counts the bigrams of the normalised text; a one-rune text is its
// own single feature.
func bigrams(text string) map[string]int {
	runes := normalize(text)
	counts := make(map[string]int, len(runes))
	if len(runes) == 1 {
		counts[string(runes)]++
	}
	buf := make([]byte, 0, 2*utf8.UTFMax)
	for i := 0; i+1 < len(runes); i++ {
		buf = utf8.AppendRune(utf8.AppendRune(buf[:0], runes[i]), runes[i+1])
		counts[string(buf)]++
	}
	return counts
}

func normalize(text string) []rune {
	out := make([]rune, 0, len(text))
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			out = append(out, unicode.ToLower(r))
		}
	}
	return out
}

// Hamming returns the number of bits in which a and b differ.
func Hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }
