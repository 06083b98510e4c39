package slave

import (
	"sort"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/neardup"
)

// joinedFieldText is the text an item's simhash was first taken of: the
// fields' strings joined in field-name order, trimmed.
func joinedFieldText(fields map[string]any) string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		switch v := fields[n].(type) {
		case string:
			b.WriteString(v)
		case []string:
			b.WriteString(strings.Join(v, " "))
		}
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

// TestFieldSimhash_SameAsJoinedText holds the simhash taken field by
// field to the simhash of the fields' text joined, and its text flag to
// whether that text is empty (then the page's text is hashed instead).
func TestFieldSimhash_SameAsJoinedText(t *testing.T) {
	for i, fields := range []map[string]any{
		nil, {}, {"a": ""}, {"a": " \t\u00a0", "b": []string{" ", ""}}, {"n": 12.5, "ok": true, "d": nil},
		{"title": "Item 7: market", "body": "the city river council", "tags": []string{"news", "city"}, "image": "/img/7.jpg"},
		{"a": "城市", "b": "经济", "c": []string{"科技", "教育"}}, // a CJK run goes on across fields
		{"a": "word", "b": "中文", "c": "Straße ΑΒΓ\xff", "d": []any{"not", "hashed"}},
		{"z": "last", "a": "first", "m": []string{"x", "中", "y"}},
	} {
		joined := joinedFieldText(fields)
		sum, text := fieldSimhash(fields)
		if want := neardup.Simhash(joined); sum != want {
			t.Errorf("case %d: simhash %#x, of the joined text %q %#x", i, sum, joined, want)
		}
		if text != (joined != "") {
			t.Errorf("case %d: text %v, joined text %q", i, text, joined)
		}
	}
}

// BenchmarkFieldSimhash hashes a demo-site item's fields field by field
// beside the first way (their text joined, then hashed).
func BenchmarkFieldSimhash(b *testing.B) {
	fields := map[string]any{"title": "Item 7: market", "body": strings.Repeat("city river council energy ", 30),
		"tags": []string{"news", "city"}, "image": "/img/7.jpg"}
	b.Run("fields", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fieldSimhash(fields)
		}
	})
	b.Run("joined", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			neardup.Simhash(joinedFieldText(fields))
		}
	})
}
