package dedup

import (
	"math/bits"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// Simhash returns the 64-bit simhash of text. Its features work for Chinese
// and Latin text alike: runs of CJK characters give character bigrams (there
// are no spaces to find words by); other runs of letters and digits give
// lowercased words and word bigrams (shingles), so that two texts made of
// the same words in another order still differ. Each feature is hashed with
// xxhash64 and weighted by its count. Texts that differ a little have
// hashes a small Hamming distance apart.
func Simhash(text string) uint64 {
	var v [64]int
	for gram, n := range features(text) {
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

// features counts the text's simhash features.
func features(text string) map[string]int {
	counts := map[string]int{}
	var word []rune
	var cjk []rune
	prevWord := ""
	flushWord := func() {
		if len(word) == 0 {
			return
		}
		w := string(word)
		counts[w]++
		if prevWord != "" {
			counts[prevWord+" "+w]++
		}
		prevWord, word = w, word[:0]
	}
	flushCJK := func() {
		addCJK(counts, cjk)
		cjk = cjk[:0]
	}
	for _, r := range text {
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			flushCJK()
			word = append(word, unicode.ToLower(r))
		default: // space or punctuation ends a word, not a CJK run
			flushWord()
		}
	}
	flushWord()
	flushCJK()
	return counts
}

// addCJK counts the character bigrams of a run of CJK characters; a run of
// one character is its own feature.
func addCJK(counts map[string]int, run []rune) {
	if len(run) == 1 {
		counts[string(run)]++
	}
	buf := make([]byte, 0, 2*utf8.UTFMax)
	for i := 0; i+1 < len(run); i++ {
		buf = utf8.AppendRune(utf8.AppendRune(buf[:0], run[i]), run[i+1])
		counts[string(buf)]++
	}
}

// isCJK reports whether r is written without spaces between words.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// Hamming returns the number of bits in which a and b differ.
func Hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }
