package store

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkItemRecord encodes one item as a JSON line, the File's way
// (appended by hand into a pooled buffer, copied into the batch) beside
// the earlier ways: encoding/json's encoder into the pooled buffer, and
// json.Marshal, then the newline appended (two copies).
func BenchmarkItemRecord(b *testing.B) {
	it := benchItem(1)
	b.Run("appender", func(b *testing.B) {
		b.ReportAllocs()
		var batch []byte
		for b.Loop() {
			buf := getBuffer()
			if err := jsonRecord(buf, it); err != nil {
				b.Fatal(err)
			}
			batch = append(batch[:0], buf.Bytes()...)
			putBuffer(buf)
		}
	})
	b.Run("encoder", func(b *testing.B) {
		b.ReportAllocs()
		var batch []byte
		for b.Loop() {
			buf := getBuffer()
			if err := json.NewEncoder(buf).Encode(it); err != nil {
				b.Fatal(err)
			}
			batch = append(batch[:0], buf.Bytes()...)
			putBuffer(buf)
		}
	})
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		var batch []byte
		for b.Loop() {
			rec, err := json.Marshal(it)
			if err != nil {
				b.Fatal(err)
			}
			batch = append(batch[:0], append(rec, '\n')...)
		}
	})
}

// BenchmarkFile_SaveVisits records batches of 32 new pages (a slave's
// committer's batch) in a JSON Lines file; one op is one batch.
func BenchmarkFile_SaveVisits(b *testing.B) {
	s, err := OpenJSONL(filepath.Join(b.TempDir(), "items.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		visits := make([]Visit, 32)
		for i := range visits {
			n++
			visits[i] = Visit{Item: benchItem(n)}
		}
		for _, r := range s.SaveVisits(context.Background(), time.Now(), visits) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
}

func TestJSONRecord_IsMarshalWithNewline(t *testing.T) {
	it := benchItem(7)
	it.Fields["html"] = "<a href=\"x\">&</a>"
	want, err := json.Marshal(it)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := jsonRecord(&buf, it); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != string(want)+"\n" {
		t.Fatalf("record %s, want %s and a newline", got, want)
	}
}
