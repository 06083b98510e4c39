package fetch

import (
	"context"
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
