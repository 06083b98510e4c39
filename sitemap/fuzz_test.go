package sitemap

import (
	"bytes"
	"compress/gzip"
	"context"
	"runtime"
	"strings"
	"testing"
)

// FuzzParse parses any body, gzipped or not, with small limits and checks
// the bounds a hostile sitemap must not pass: at most the limit's entries,
// and memory within a constant factor of the bytes it may read (the input,
// or the limit once unzipped) whatever the nesting.
//
//	go test -run='^$' -fuzz=FuzzParse -fuzztime=30s ./sitemap/
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`<urlset><url><loc>https://a.example/1</loc><lastmod>2024-01-02</lastmod></url></urlset>`,
		`<sitemapindex><sitemap><loc>/s2.xml</loc></sitemap></sitemapindex>`,
		"https://a.example/1\nhttps://a.example/2\n",
		`<urlset><url>` + strings.Repeat("<a>", 100) + `<loc>x</loc>`,
		`<?xml version="1.0" encoding="x"?><urlset xmlns:i="i"><url><i:loc>y</i:loc><loc> z </loc></url>`,
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	lim := limits{urls: 20, bytes: 64 << 10}
	f.Fuzz(func(t *testing.T, body []byte, zip bool) {
		if len(body) > 64<<10 {
			return
		}
		if zip {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write(body)
			zw.Close()
			body = b.Bytes()
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		file, err := parse(context.Background(), body, lim)
		runtime.ReadMemStats(&after)
		if err != nil {
			return
		}
		if len(file.Entries) > lim.urls {
			t.Fatalf("%d entries, limit %d", len(file.Entries), lim.urls)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20+32*uint64(len(body)+int(lim.bytes)) {
			t.Fatalf("allocated %d bytes for a body of %d", alloc, len(body))
		}
	})
}
