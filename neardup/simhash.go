package neardup

import (
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
	var c bitCounts
	eachFeature(text, c.add)
	return c.majority()
}

// bitCounts counts, for each of 64 bits, the feature hashes that have it
// set. Eight lanes of eight byte-wide counters take a hash in eight adds
// (lane j, byte k counts bit 8k+j), instead of one increment per set bit;
// they are emptied into set before a byte can overflow.
type bitCounts struct {
	lanes   [8]uint64
	inLanes int // hashes counted in lanes, not yet in set
	set     [64]int
	total   int
}

// add counts the bits of one feature hash.
func (c *bitCounts) add(h uint64) {
	const ones = 0x0101010101010101
	c.lanes[0] += h & ones
	c.lanes[1] += h >> 1 & ones
	c.lanes[2] += h >> 2 & ones
	c.lanes[3] += h >> 3 & ones
	c.lanes[4] += h >> 4 & ones
	c.lanes[5] += h >> 5 & ones
	c.lanes[6] += h >> 6 & ones
	c.lanes[7] += h >> 7 & ones
	c.total++
	if c.inLanes++; c.inLanes == 255 {
		c.empty()
	}
}

// empty moves the lanes' counts into set.
func (c *bitCounts) empty() {
	for j, l := range c.lanes {
		for k := range 8 {
			c.set[8*k+j] += int(l >> (8 * k) & 0xff)
		}
	}
	c.lanes, c.inLanes = [8]uint64{}, 0
}

// majority is the simhash: bit i is set when the features with bit i set
// outweigh those without, 2*set[i] > total.
func (c *bitCounts) majority() uint64 {
	c.empty()
	var out uint64
	for i, w := range c.set {
		if 2*w > c.total {
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
	for i := 0; i < len(text); {
		r := rune(text[i])
		if r < utf8.RuneSelf { // ASCII: one look-up
			if lower := asciiWord[r]; lower == 0 {
				if len(word) > 0 {
					endWord()
				}
			} else {
				if len(cjk) > 0 {
					endCJK()
				}
				word = append(word, lower)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
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

// asciiWord is, for each ASCII character, itself lowercased when it is a
// letter or a digit (it goes into a word), else 0 (it ends one).
var asciiWord = func() (w [utf8.RuneSelf]byte) {
	for b := range w {
		if r := rune(b); unicode.IsLetter(r) || unicode.IsNumber(r) {
			w[b] = byte(unicode.ToLower(r))
		}
	}
	return w
}()

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
