package neardup

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
// the same words in another order still differ. Punctuation does not break
// a CJK run, as a word would. Each feature occurrence counts once, hashed
// with xxhash64 (a word bigram: the two words' hashes mixed). Texts that
// differ a little have hashes a small Hamming distance apart.
func Simhash(text string) uint64 {
	// Bit i is set when the features with bit i set outweigh those without:
	// 2*set[i] > total. Walking only the set bits halves the work of the
	// usual +1/-1 loop over all 64, and has no branch to mispredict.
	var set [64]int
	total := 0
	eachFeature(text, func(h uint64) {
		total++
		for ; h != 0; h &= h - 1 {
			set[bits.TrailingZeros64(h)]++
		}
	})
	var out uint64
	for i, w := range set {
		if 2*w > total {
			out |= 1 << i
		}
	}
	return out
}

// eachFeature calls add with the hash of every feature occurrence of text.
func eachFeature(text string, add func(uint64)) {
	var (
		word     []byte // the current word, lowercased UTF-8
		prevWord uint64 // hash of the word before it, 0 at the start
		cjk      []rune // the current CJK run
		pair     [2 * utf8.UTFMax]byte
	)
	endWord := func() {
		if len(word) == 0 {
			return
		}
		h := xxhash.Sum64(word)
		add(h)
		if prevWord != 0 {
			add(mix64(prevWord*0x9E3779B97F4A7C15 ^ h))
		}
		prevWord, word = h, word[:0]
	}
	endCJK := func() {
		if len(cjk) == 1 {
			add(xxhash.Sum64(utf8.AppendRune(pair[:0], cjk[0])))
		}
		for i := 0; i+1 < len(cjk); i++ {
			add(xxhash.Sum64(utf8.AppendRune(utf8.AppendRune(pair[:0], cjk[i]), cjk[i+1])))
		}
		cjk = cjk[:0]
	}
	for _, r := range text {
		switch {
		case isCJK(r):
			endWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			endCJK()
			word = utf8.AppendRune(word, unicode.ToLower(r))
		default: // space or punctuation ends a word, not a CJK run
			endWord()
		}
	}
	endWord()
	endCJK()
}

// mix64 is the splitmix64 finalizer: a cheap, well-spread 64-bit mix.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	return x ^ x>>31
}

// isCJK reports whether r is written without spaces between words.
func isCJK(r rune) bool {
	if r < 0x1100 { // below Hangul Jamo: Latin, Greek, Cyrillic, ...
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}
