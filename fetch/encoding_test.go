package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"golang.org/x/text/encoding/simplifiedchinese"
)

// compress encodes b with one Content-Encoding.
func compress(t testing.TB, coding string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch coding {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate": // RFC 9110: zlib
		w = zlib.NewWriter(&buf)
	case "raw-deflate": // what some servers send as deflate
		w, err = flate.NewWriter(&buf, flate.DefaultCompression)
	case "br":
		w = brotli.NewWriterLevel(&buf, brotli.BestSpeed)
	default:
		t.Fatalf("no encoder for %s", coding)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// encodedSite serves payload with the given Content-Type and
// Content-Encoding header.
func encodedSite(t *testing.T, contentType, encoding string, payload []byte) *site {
	return newSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Encoding", encoding)
		_, _ = w.Write(payload)
	})
}

func TestFetcher_contentEncoding(t *testing.T) {
	page := "<html><body><h1>" + strings.Repeat("compressed ", 200) + "</h1></body></html>"
	for _, tc := range []struct {
		header string
		encode func(t *testing.T) []byte
	}{
		{"gzip", func(t *testing.T) []byte { return compress(t, "gzip", []byte(page)) }},
		{"x-gzip", func(t *testing.T) []byte { return compress(t, "gzip", []byte(page)) }},
		{"deflate", func(t *testing.T) []byte { return compress(t, "deflate", []byte(page)) }},
		{"DEFLATE", func(t *testing.T) []byte { return compress(t, "raw-deflate", []byte(page)) }},
		{"br", func(t *testing.T) []byte { return compress(t, "br", []byte(page)) }},
		{"identity", func(t *testing.T) []byte { return []byte(page) }},
		{"gzip, br", func(t *testing.T) []byte { return compress(t, "br", compress(t, "gzip", []byte(page))) }},
	} {
		t.Run(tc.header, func(t *testing.T) {
			s := encodedSite(t, "text/html", tc.header, tc.encode(t))
			p, err := do(t, testFetcher(nil), Request{URL: s.URL})
			if err != nil || string(p.Body) != page {
				t.Errorf("Do = %q, %v; want the page decoded", body(p)[:min(len(body(p)), 40)], err)
			}
		})
	}
	t.Run("gzip then charset", func(t *testing.T) {
		gbk, _ := simplifiedchinese.GBK.NewEncoder().Bytes([]byte("<h1>城市经济</h1>"))
		s := encodedSite(t, "text/html; charset=gbk", "gzip", compress(t, "gzip", gbk))
		p, err := do(t, testFetcher(nil), Request{URL: s.URL})
		if err != nil || string(p.Body) != "<h1>城市经济</h1>" {
			t.Errorf("Do = %q, %v; want the GBK page unzipped and decoded", body(p), err)
		}
	})
	t.Run("unsupported encoding is permanent", func(t *testing.T) {
		s := encodedSite(t, "text/html", "zstd", []byte("whatever"))
		_, err := do(t, testFetcher(nil), Request{URL: s.URL})
		if !errors.Is(err, ErrUnsupportedEncoding) || IsTransient(err) {
			t.Errorf("Do = %v, want permanent ErrUnsupportedEncoding", err)
		}
	})
	t.Run("corrupt gzip is permanent", func(t *testing.T) {
		s := encodedSite(t, "text/html", "gzip", []byte("this is not gzip at all"))
		_, err := do(t, testFetcher(nil), Request{URL: s.URL})
		if err == nil || IsTransient(err) {
			t.Errorf("Do = %v, want a permanent error", err)
		}
	})
	t.Run("compressed size over the limit", func(t *testing.T) {
		incompressible := make([]byte, 4096)
		for i := range incompressible {
			incompressible[i] = byte(i*7919 + i/13)
		}
		s := encodedSite(t, "text/html", "identity", incompressible)
		_, err := do(t, testFetcher(nil), Request{URL: s.URL, MaxBodyBytes: 4095})
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("Do = %v, want ErrTooLarge", err)
		}
	})
}

// TestFetcher_decompressionBomb serves 32 MiB of zeros compressed to a few
// dozen KiB: the fetch must fail with ErrTooLarge after reading about the
// 256 KiB limit, and allocate nowhere near the bomb's size.
func TestFetcher_decompressionBomb(t *testing.T) {
	const limit = 256 << 10
	const bombSize = 32 << 20
	zeros := make([]byte, 1<<20)
	for _, coding := range []string{"gzip", "deflate", "br"} {
		t.Run(coding, func(t *testing.T) {
			var buf bytes.Buffer
			w := bombWriter(t, coding, &buf)
			for range bombSize / len(zeros) {
				_, _ = w.Write(zeros)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s bomb: %d bytes decode to %d", coding, buf.Len(), bombSize)
			s := encodedSite(t, "text/html", coding, buf.Bytes())
			f := testFetcher(nil)

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := do(t, f, Request{URL: s.URL, MaxBodyBytes: limit})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) || IsTransient(err) {
				t.Errorf("Do = %v, want permanent ErrTooLarge", err)
			}
			// The server's side allocates little (the bomb is prebuilt); a
			// client that decoded the bomb would allocate over 256 MiB.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 12<<20 {
				t.Errorf("fetching the bomb allocated %d MiB, want well under the %d MiB it decodes to", alloc>>20, bombSize>>20)
			}
		})
	}
}

func bombWriter(t *testing.T, coding string, w io.Writer) io.WriteCloser {
	t.Helper()
	switch coding {
	case "gzip":
		zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
		return zw
	case "deflate":
		zw, _ := zlib.NewWriterLevel(w, zlib.BestSpeed)
		return zw
	case "br":
		return brotli.NewWriterLevel(w, brotli.BestSpeed)
	}
	t.Fatalf("no bomb for %s", coding)
	return nil
}
