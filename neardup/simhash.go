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
	var h Hasher
	h.WriteString(text)
	return h.Sum64()
}

// Hasher is Simhash over text given in pieces: after WriteString(a) and
// WriteString(b), Sum64 is Simhash(a + b), without a + b being built. A
// slave hashes an item's fields so, one after another. The zero Hasher
// is ready, and stays on its caller's stack: a word of up to 64 bytes
// is held in it, a longer one allocated.
type Hasher struct {
	c        bitCounts
	prevWord uint64 // hash of the word before it, 0 at the start
	// The current word, lowercased UTF-8: wordBuf[:wordLen], or long once
	// it outgrows wordBuf.
	wordBuf [64]byte
	wordLen int
	long    []byte
	// The current CJK run: its length and last character (its bigrams
	// are counted as they are read).
	cjkLen  int
	cjkLast rune
}

// Sum64 ends the text and returns its simhash. The Hasher is spent.
func (h *Hasher) Sum64() uint64 {
	h.endWord()
	h.endCJK()
	return h.c.majority()
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

// wordByte appends a byte to the current word.
func (h *Hasher) wordByte(b byte) {
	if h.long == nil && h.wordLen < len(h.wordBuf) {
		h.wordBuf[h.wordLen] = b
		h.wordLen++
		return
	}
	if h.long == nil {
		h.long = append(make([]byte, 0, 2*len(h.wordBuf)), h.wordBuf[:h.wordLen]...)
	}
	h.long = append(h.long, b)
}

// endWord counts the word just read and its bigram with the one before.
func (h *Hasher) endWord() {
	var w uint64
	switch {
	case h.long != nil:
		w = xxhash.Sum64(h.long)
	case h.wordLen > 0:
		w = xxhash.Sum64(h.wordBuf[:h.wordLen])
	default:
		return
	}
	h.c.add(w)
	if h.prevWord != 0 {
		h.c.add(mix64(h.prevWord*0x9E3779B97F4A7C15 ^ w))
	}
	h.prevWord, h.wordLen, h.long = w, 0, nil
}

// cjkRune reads a CJK character: its bigram with the one before it in
// the run is a feature.
func (h *Hasher) cjkRune(r rune) {
	if h.cjkLen > 0 {
		var pair [2 * utf8.UTFMax]byte
		h.c.add(xxhash.Sum64(utf8.AppendRune(utf8.AppendRune(pair[:0], h.cjkLast), r)))
	}
	h.cjkLen, h.cjkLast = h.cjkLen+1, r
}

// endCJK ends the CJK run just read: a run of one character is a feature
// of its own.
func (h *Hasher) endCJK() {
	if h.cjkLen == 1 {
		var one [utf8.UTFMax]byte
		h.c.add(xxhash.Sum64(utf8.AppendRune(one[:0], h.cjkLast)))
	}
	h.cjkLen = 0
}

// WriteString reads more of the text, cut between two characters: every
// feature it ends is counted.
func (h *Hasher) WriteString(text string) {
	for i := 0; i < len(text); {
		r := rune(text[i])
		if r < utf8.RuneSelf { // ASCII: one look-up
			if lower := asciiWord[r]; lower == 0 {
				h.endWord()
			} else {
				if h.cjkLen > 0 {
					h.endCJK()
				}
				h.wordByte(lower)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		h.rune(r)
	}
}

// rune reads one character outside ASCII.
func (h *Hasher) rune(r rune) {
	switch {
	case isCJK(r):
		h.endWord()
		h.cjkRune(r)
	case unicode.IsLetter(r) || unicode.IsNumber(r):
		h.endCJK()
		var enc [utf8.UTFMax]byte
		for _, b := range utf8.AppendRune(enc[:0], unicode.ToLower(r)) {
			h.wordByte(b)
		}
	default: // space or punctuation ends a word, not a CJK run
		h.endWord()
	}
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
