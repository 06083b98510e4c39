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
