package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
			io.WriteString(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			var chunk strings.Builder
			for i := 0; chunk.Len() < 1<<20; i++ {
				fmt.Fprintf(&chunk, "<url><loc>http://%s/p/%d</loc></url>\n", r.Host, i%pages)
			}
			for written := 0; written < 200<<20; written += chunk.Len() {
				if _, err := io.WriteString(w, chunk.String()); err != nil {
					return // the crawler read what it takes
				}
			}
			io.WriteString(w, "</urlset>")
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
	dir := t.TempDir()
	jobFile, out := filepath.Join(dir, "bigsitemap.yaml"), filepath.Join(dir, "items.jsonl")
	if err := os.WriteFile(jobFile, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := crawler(t, 3*time.Minute, "run", "--job", jobFile, "-o", out, "--log-level", "warn")
	if err != nil {
		t.Fatalf("crawler run: %v\nstdout %s\nstderr %s", err, stdout, tail(stderr, 4000))
	}
	if n := len(readItems(t, out)); n != pages {
		t.Errorf("%d items stored, want the sitemap's %d\n%s", n, pages, stdout)
	}
	if !strings.Contains(stderr, "sitemaps truncated") || !strings.Contains(stderr, "/sitemap.xml") {
		t.Errorf("the run does not say the sitemap was truncated:\n%s", tail(stderr, 3000))
	}
}
