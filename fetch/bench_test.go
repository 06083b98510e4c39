package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// BenchmarkFetcher_Do fetches a 20 KB HTML page from loopback: as sent,
// gzipped, and through a loopback HTTP proxy. Run with
//
//	go test -run='^$' -bench=Fetcher_Do -benchmem ./fetch/
func BenchmarkFetcher_Do(b *testing.B) {
	page := []byte("<html><body>" + strings.Repeat("<p>benchmark text</p>", 1000) + "</body></html>")
	zipped := compress(b, "gzip", page)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(zipped)
			return
		}
		_, _ = w.Write(page)
	}))
	defer srv.Close()
	proxy := benchProxy(b)
	for _, bc := range []struct {
		name, path string
		proxy      *url.URL
	}{
		{"direct", "/plain", nil},
		{"gzip", "/gzip", nil},
		{"http-proxy", "/plain", proxy},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := New(Options{})
			req := Request{URL: srv.URL + bc.path, AllowPrivate: true, Proxy: bc.proxy}
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				p, err := f.Do(context.Background(), req)
				if err != nil || len(p.Body) != len(page) {
					b.Fatalf("Do = %v", err)
				}
			}
		})
	}
}

func benchProxy(b *testing.B) *url.URL {
	p := unstartedHTTPProxy("", "")
	p.Start()
	b.Cleanup(p.Close)
	return p.URL(nil)
}

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
