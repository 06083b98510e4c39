package fetch

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// BenchmarkReadBody reads a 20 KB body whose size is known (the
// Content-Length of an unencoded answer) into one buffer of that size,
// beside io.ReadAll's way (from 512 bytes, doubling: every doubling a
// copy).
func BenchmarkReadBody(b *testing.B) {
	body := []byte("<html><body>" + strings.Repeat("<p>benchmark text</p>", 1000) + "</body></html>")
	b.Run("sized", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := readSized(bytes.NewReader(body), 1<<20, int64(len(body))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("readall", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := io.ReadAll(io.LimitReader(bytes.NewReader(body), 1<<20+1)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestReadSized(t *testing.T) {
	body := strings.Repeat("x", 3000)
	for _, size := range []int64{-1, 0, 1, 2999, 3000, 3001, 10000} {
		got, err := readSized(strings.NewReader(body), 5000, size)
		if err != nil || string(got) != body {
			t.Fatalf("size hint %d: read %d bytes, %v; want the 3000", size, len(got), err)
		}
	}
	for _, size := range []int64{0, 100, 3000} {
		if _, err := readSized(strings.NewReader(body), 2999, size); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("size hint %d, limit 2999 of 3000 bytes: err %v, want ErrTooLarge", size, err)
		}
	}
}
