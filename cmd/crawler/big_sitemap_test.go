package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestRun_bigSitemap (issue 29, item 8): a 200 MB uncompressed sitemap
// (streamed) is read up to its first 50 MiB, as docs/job-file.md says:
// the pages it lists there are stored, and the run says the sitemap was
// truncated.
func TestRun_bigSitemap(t *testing.T) {
	t.Parallel()
	const pages = 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			testenv.StreamSitemap(w, r.Host, pages, 200<<20)
		case strings.HasPrefix(r.URL.Path, "/p/"):
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<html><body><h1>%s</h1></body></html>", r.URL.Path)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>nothing here</body></html>")
		}
	}))
	t.Cleanup(srv.Close)
	job := fmt.Sprintf(`name: bigsitemap
seeds: ["%[1]s/"]
allow_private_networks: true
per_host_rps: 100
sitemaps: [{url: "%[1]s/sitemap.xml", kind: product}]
kinds:
  start: {links: [{css: "a.p", kind: product}]}
  product: {item: true, fields: {title: {css: "h1"}}}
`, srv.URL)
	stdout, stderr, out := runSpec(t, job)
	if n := len(readItems(t, out)); n != pages {
		t.Errorf("%d items stored, want the sitemap's %d\n%s", n, pages, stdout)
	}
	if !strings.Contains(stderr, "sitemaps truncated") || !strings.Contains(stderr, "/sitemap.xml") {
		t.Errorf("the run does not say the sitemap was truncated:\n%s", tail(stderr, 3000))
	}
}
