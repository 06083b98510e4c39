package extract

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCollapseSpace_SameAsFieldsJoined(t *testing.T) {
	texts := []string{"", " ", "a", " a", "a ", "a b", "a  b", "a\tb", "a\nb", "\u00a0a\u00a0b\u00a0", "a\u2028b",
		"中 文", "bad\xffutf8 \xff", "a b c d", " lead", "trail ", "x\x85y", "\r\n"}
	alphabet := []string{"a", "Z", "0", " ", "  ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u0085", "\u2003", "é", "中", "\xff", "."}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, s := range texts {
		if got, want := CollapseSpace(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("CollapseSpace(%q) = %q, want %q", s, got, want)
		}
	}
}

// BenchmarkCollapseSpace collapses an element's text as textOf gives it
// (a paragraph with its line breaks and indentation), and a text that
// is collapsed already, beside strings.Fields joined (the first way).
func BenchmarkCollapseSpace(b *testing.B) {
	para := "\n    " + strings.Repeat("Officials said the plan would cut commuting times.\n    ", 20)
	flat := strings.Join(strings.Fields(para), " ")
	for _, c := range []struct {
		name string
		text string
	}{{"paragraph", para}, {"collapsed", flat}} {
		b.Run(c.name+"/now", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				CollapseSpace(c.text)
			}
		})
		b.Run(c.name+"/fields-joined", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = strings.Join(strings.Fields(c.text), " ")
			}
		})
	}
}

// foldPieces folds pieces with spaceFolder, a block boundary (space)
// where a piece is "|".
func foldPieces(pieces []string) string {
	var f spaceFolder
	for _, p := range pieces {
		if p == "|" {
			f.space()
			continue
		}
		f.write(p)
	}
	return f.String()
}

// TestSpaceFolder_SameAsCollapseSpace holds text folded piece by piece
// (text nodes, block boundaries between some) to CollapseSpace of the
// pieces joined, block boundaries as spaces: what textOf gave before it
// folded as it read.
func TestSpaceFolder_SameAsCollapseSpace(t *testing.T) {
	alphabet := []string{"a", "Z", "0", " ", "  ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u0085", "\u2003", "é", "中",
		"\xff", ".", "|", "\xe4\xb8", "\xc2", "\xa0", "\xe2\x80", "\x83", "\xad"}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		var pieces []string
		for range rng.IntN(8) {
			var b strings.Builder
			for range rng.IntN(6) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			pieces = append(pieces, strings.ReplaceAll(b.String(), "|", ""), "|"[:rng.IntN(2)])
		}
		joined := strings.ReplaceAll(strings.Join(pieces, ""), "|", " ")
		if got, want := foldPieces(pieces), CollapseSpace(joined); got != want {
			t.Fatalf("folded %q = %q, CollapseSpace of them joined %q", pieces, got, want)
		}
	}
}

// FuzzSpaceFolder holds the folder to CollapseSpace on fuzzed text cut
// in two, with or without a block boundary between.
func FuzzSpaceFolder(f *testing.F) {
	f.Add("a b", "c\u00a0d", true)
	f.Add("\xe4\xb8", "\xad x", false)
	f.Add("a\xc2", "\xa0b", false)
	f.Add("a\xe2\x80", "\x83b\xc2", true)
	f.Fuzz(func(t *testing.T, a, b string, block bool) {
		sep, pieces := "", []string{a, b}
		if block {
			sep, pieces = " ", []string{a, "|", b}
		}
		if strings.Contains(a+b, "|") {
			return // "|" marks a boundary in foldPieces
		}
		if got, want := foldPieces(pieces), CollapseSpace(a+sep+b); got != want {
			t.Fatalf("folded %q = %q, CollapseSpace %q", pieces, got, want)
		}
	})
}
