package store

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]Format{
		"items.jsonl": FormatJSONL, "out/ITEMS.JSONL": FormatJSONL, "-": FormatJSONL,
		"items.json": FormatJSON, "items.csv": FormatCSV, "a.b.Csv": FormatCSV,
	} {
		if got, err := FormatOf(path); err != nil || got != want {
			t.Errorf("FormatOf(%s) = %v, %v; want %v", path, got, err, want)
		}
	}
	for _, path := range []string{"items.txt", "items", "items.jsonl.gz", ""} {
		_, err := FormatOf(path)
		if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), ".jsonl, .json, .csv") {
			t.Errorf("FormatOf(%q) = %v, want ErrUnknownFormat listing the accepted extensions", path, err)
		}
	}
}

// sampleItems are two items with what CSV must quote: commas, quotes,
// newlines, a list.
func sampleItems() []Item {
	at := time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC)
	return []Item{
		{ID: "news:a", URL: "https://example.com/a", Job: "news", Fingerprint: "a", FetchedAt: at, Status: 200,
			Fields: map[string]any{"title": `Say "hi", world`, "body": "line one\nline two", "tags": []string{"x", "y"}}},
		{ID: "news:b", URL: "https://example.com/b?q=1,2", Job: "news", Fingerprint: "b", FetchedAt: at, Status: 200, Round: 2,
			Fields: map[string]any{"title": "B", "tags": bson.A{"only"}}},
	}
}

func TestNewItemWriter(t *testing.T) {
	items := sampleItems()
	write := func(f Format, fields []string, items []Item) string {
		var buf bytes.Buffer
		w := NewItemWriter(&buf, f, fields)
		for _, it := range items {
			if err := w.Write(it); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	t.Run("jsonl", func(t *testing.T) {
		out := write(FormatJSONL, nil, items)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("%d lines, want 2: %q", len(lines), out)
		}
		var it Item
		if err := json.Unmarshal([]byte(lines[0]), &it); err != nil || it.ID != "news:a" || it.Fields["body"] != "line one\nline two" {
			t.Errorf("line 1 decodes to %+v, %v; want news:a with its body", it, err)
		}
	})
	t.Run("json", func(t *testing.T) {
		out := write(FormatJSON, nil, items)
		var got []Item
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 2 || got[1].URL != items[1].URL {
			t.Errorf("array %q decodes to %d items, %v; want 2", out, len(got), err)
		}
		if strings.Count(out, "\n") != 4 {
			t.Errorf("array %q: want one item a line", out)
		}
		if empty := write(FormatJSON, nil, nil); empty != "[]\n" {
			t.Errorf("no items = %q, want []", empty)
		}
	})
	t.Run("csv", func(t *testing.T) {
		items := slices.Clone(items)
		items[0].Kind = "product"
		out := write(FormatCSV, []string{"title", "tags", "body"}, items)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		want := [][]string{
			{"url", "job", "fetched_at", "status", "round", "kind", "body", "tags", "title"},
			{"https://example.com/a", "news", "2025-01-02T03:04:05.0000006Z", "200", "0", "product", "line one\nline two", "x | y", `Say "hi", world`},
			{"https://example.com/b?q=1,2", "news", "2025-01-02T03:04:05.0000006Z", "200", "2", "", "", "only", "B"},
		}
		if !reflect.DeepEqual(recs, want) {
			t.Errorf("csv = %q\nwant %q", recs, want)
		}
		if header := write(FormatCSV, []string{"b", "a"}, nil); header != "url,job,fetched_at,status,round,kind,a,b\n" {
			t.Errorf("no items = %q, want the header alone", header)
		}
	})
}

func TestCellText(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, ""}, {"x", "x"}, {[]string{}, ""}, {[]string{"a", "b"}, "a | b"},
		{[]any{"a", 1.5}, "a | 1.5"}, {bson.A{"a"}, "a"}, {42, "42"},
	} {
		if got := cellText(tc.in); got != tc.want {
			t.Errorf("cellText(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestFailure_JSON: a failure line carries its fingerprint, and decoding
// it gives the ID back; an item's too.
func TestFailure_JSON(t *testing.T) {
	f := Failure{ID: "news:abc", URL: "https://example.com/x", Job: "news", Kind: KindDetail, Reason: "gone", Status: 404}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["fingerprint"] != "abc" || m["reason"] != "gone" || m["_id"] != nil {
		t.Errorf("failure JSON %s: want fingerprint abc, reason gone, no _id", b)
	}
	var back Failure
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, f) {
		t.Errorf("decoded %+v (%v), want %+v", back, err, f)
	}
	var it Item
	if err := json.Unmarshal([]byte(`{"job":"news","fingerprint":"abc","url":"u"}`), &it); err != nil || it.ID != "news:abc" {
		t.Errorf("item decoded with ID %q (%v), want news:abc", it.ID, err)
	}
}
