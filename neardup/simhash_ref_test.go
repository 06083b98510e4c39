package neardup

import (
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// refSimhash is Simhash as it was written first: a rune at a time through
// the unicode tables, features handed to a closure. Simhash must give the
// same hash for every text (a changed hash would make every stored page's
// near-duplicate record disagree with a re-crawl's).
func refSimhash(text string) uint64 {
	var set [64]int
	total := 0
	var (
		word     []byte
		prevWord uint64
		cjk      []rune
		pair     [2 * utf8.UTFMax]byte
	)
	add := func(h uint64) {
		total++
		for ; h != 0; h &= h - 1 {
			set[bits.TrailingZeros64(h)]++
		}
	}
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
		default:
			endWord()
		}
	}
	endWord()
	endCJK()
	var out uint64
	for i, w := range set {
		if 2*w > total {
			out |= 1 << i
		}
	}
	return out
}

func TestSimhash_SameAsReference(t *testing.T) {
	for _, text := range refTexts() {
		if got, want := Simhash(text), refSimhash(text); got != want {
			t.Fatalf("Simhash(%q) = %#x, the reference gives %#x", text, got, want)
		}
	}
}

// TestHasher_PiecesAreTheWhole checks that text written in pieces, cut
// between any two characters (inside a word, a CJK run), hashes as the
// whole: a slave hashes an item's fields one after another.
func TestHasher_PiecesAreTheWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, text := range refTexts() {
		var h Hasher
		rest := text
		for len(rest) > 0 {
			n := rng.IntN(len(rest) + 1)
			for n < len(rest) && !utf8.RuneStart(rest[n]) {
				n++
			}
			h.WriteString(rest[:n])
			rest = rest[n:]
		}
		if got, want := h.Sum64(), refSimhash(text); got != want {
			t.Fatalf("%q in pieces hashes to %#x, the whole to %#x", text, got, want)
		}
	}
}

// refTexts are texts of every kind of character Simhash reads, and random
// ones of them.
func refTexts() []string {
	texts := []string{"", " ", "a", "A", "中", "中文", "Ünïcödé Straße ΑΒΓ", "abc\xffdef\x00ghi",
		enA, enB, zhA, zhB, enA + zhA, strings.ToUpper(enB), "x" + strings.Repeat("ab", 200) + "中"}
	alphabet := []rune("aZ09 .,\t\nÉéßΣσ中文字ひらカタ한글\xff\u00a0\u2028")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(120) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	return texts
}
