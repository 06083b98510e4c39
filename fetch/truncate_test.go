package fetch

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// streamLines writes numbered lines to w until n bytes are written or the
// client goes away, without holding the body.
func streamLines(w http.ResponseWriter, n int) {
	chunk := lineChunk()
	for left := n; left > 0; left -= len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// lineChunk is 64 KiB or a little more of numbered lines.
func lineChunk() []byte {
	var chunk bytes.Buffer
	for i := 0; chunk.Len() < 64<<10; i++ {
		chunk.WriteString("http://127.0.0.1/page/" + strings.Repeat("x", i%50) + "\n")
	}
	return chunk.Bytes()
}

// TestFetcher_truncateBody (issue 29, item 8): with TruncateBody, a body
// longer than MaxBodyBytes is its first MaxBodyBytes, marked Truncated,
// not an ErrTooLarge failure: as sent (a 200 MB body streamed) and once
// decompressed. A body within the limit is whole and not marked.
func TestFetcher_truncateBody(t *testing.T) {
	const limit = 1 << 20
	plain := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		streamLines(w, 200<<20)
	})
	gz := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Encoding", "gzip")
		zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
		streamLines(&gzipResponse{ResponseWriter: w, zw: zw}, 20<<20)
		_ = zw.Close()
	})
	small := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		streamLines(w, 1000)
	})
	for _, tc := range []struct {
		name    string
		url     string
		cut     bool
		wantLen int
	}{
		{"as sent", plain.URL, true, limit},
		{"once decompressed", gz.URL, true, limit},
		{"within the limit", small.URL, false, len(lineChunk())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := do(t, testFetcher(nil), Request{URL: tc.url, MaxBodyBytes: limit, TruncateBody: true, AllowNonHTML: true})
			if err != nil {
				t.Fatalf("Do: %v, want the body's first %d bytes", err, limit)
			}
			if len(page.Body) != tc.wantLen || page.Truncated != tc.cut {
				t.Errorf("body of %d bytes, truncated %v; want %d, %v", len(page.Body), page.Truncated, tc.wantLen, tc.cut)
			}
			if !strings.HasPrefix(string(page.Body), "http://127.0.0.1/page/\nhttp://127.0.0.1/page/x\n") {
				t.Errorf("body starts %q, want the body's own start", page.Body[:min(60, len(page.Body))])
			}
		})
	}
	t.Run("without TruncateBody", func(t *testing.T) {
		if _, err := do(t, testFetcher(nil), Request{URL: plain.URL, MaxBodyBytes: limit, AllowNonHTML: true}); err == nil || !strings.Contains(err.Error(), ErrTooLarge.Error()) {
			t.Errorf("Do = %v, want ErrTooLarge", err)
		}
	})
}

// gzipResponse is a ResponseWriter whose body goes through zw.
type gzipResponse struct {
	http.ResponseWriter
	zw *gzip.Writer
}

func (g *gzipResponse) Write(p []byte) (int, error) { return g.zw.Write(p) }

// zeros reads as zero bytes without end.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestReadSized_garbage: a body of unknown size grows its buffer by
// doubling, so reading 16 MiB allocates under three times that (append's
// growth by a quarter allocated about five times the body, all of it
// garbage the process's memory peaks with), and comes out whole; cut at
// the limit with readCut.
func TestReadSized_garbage(t *testing.T) {
	const size = 16 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b, err := readSized(io.LimitReader(zeros{}, size), 32<<20, 0)
	runtime.ReadMemStats(&after)
	if err != nil || len(b) != size {
		t.Fatalf("read %d bytes, %v; want %d", len(b), err, size)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*size {
		t.Errorf("reading %d MiB allocated %d MiB, want under %d", size>>20, alloc>>20, 3*size>>20)
	}
	cut, ok, err := readCut(zeros{}, size, 0)
	if err != nil || !ok || len(cut) != size {
		t.Errorf("readCut of an endless body: %d bytes, cut %v, %v; want %d, true", len(cut), ok, err, size)
	}
}
