package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/store"
)

// metadataURL is an address the guard refuses even to a job with
// allow_private_networks: the dial is refused before a packet leaves, so
// the tests still talk only to loopback.
const metadataURL = "http://169.254.169.254/latest/meta-data/"

// hitCounter serves a site and counts the requests each path got.
type hitCounter struct {
	mu   sync.Mutex
	hits map[string]int
}

func (h *hitCounter) count(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hits[path]++
}

func (h *hitCounter) get(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[path]
}

// serveRefusedSite serves a list page and a sitemap that each link three
// good products and one address the guard refuses; the list page also
// links a list page at that address.
func serveRefusedSite(t *testing.T) (*hitCounter, string) {
	t.Helper()
	h := &hitCounter{hits: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/list", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><a class="d" href="/d/1">1</a><a class="d" href="`+metadataURL+`">meta</a>`+
			`<a class="d" href="/d/2">2</a><a class="d" href="/d/3">3</a><a class="more" href="http://169.254.169.254/list">more</a></body></html>`)
	})
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://%[1]s/s/1</loc></url>`+
			`<url><loc>http://169.254.169.254/s/meta</loc></url><url><loc>http://%[1]s/s/2</loc></url><url><loc>http://%[1]s/s/3</loc></url></urlset>`, r.Host)
	})
	for _, p := range []string{"/d/", "/s/"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<html><body><h1>%s</h1></body></html>", r.URL.Path)
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.count(r.URL.Path)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return h, srv.URL
}

// readFailuresFile reads the failures file `run` writes beside its items.
func readFailuresFile(t *testing.T, itemsPath string) []store.Failure {
	t.Helper()
	f, err := os.Open(store.FailuresPath(itemsPath))
	if err != nil {
		t.Fatalf("failures file: %v", err)
	}
	defer f.Close()
	var out []store.Failure
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var fl store.Failure
		if err := json.Unmarshal(sc.Bytes(), &fl); err != nil {
			t.Fatalf("failure line %q: %v", sc.Text(), err)
		}
		out = append(out, fl)
	}
	return out
}

// runSpec writes spec as a job file and runs `crawler run` on it to the
// end, failing the test unless it exits 0; it returns run's stdout and
// stderr, and the path of its items.
func runSpec(t *testing.T, spec string) (stdout, stderr, items string) {
	t.Helper()
	dir := t.TempDir()
	jobFile, items := filepath.Join(dir, "job.yaml"), filepath.Join(dir, "items.jsonl")
	if err := os.WriteFile(jobFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := crawler(t, 3*time.Minute, "run", "--job", jobFile, "-o", items, "--log-level", "warn")
	if err != nil {
		t.Fatalf("crawler run: %v\nstdout %s\nstderr %s", err, stdout, tail(stderr, 4000))
	}
	return stdout, stderr, items
}

// storedPaths are the URLs of the items in the file at items, without
// base, sorted and space-separated.
func storedPaths(t *testing.T, items, base string) string {
	t.Helper()
	var stored []string
	for _, it := range readItems(t, items) {
		stored = append(stored, strings.TrimPrefix(it.URL, base))
	}
	sort.Strings(stored)
	return strings.Join(stored, " ")
}

// TestRun_refusedLinks (issue 29, item 5): a link to an address the guard
// refuses is that link's failure only. The list page and the sitemap that
// hold one are read once, their good links are stored, and the refused
// ones are recorded as failed with a reason naming the address rule; the
// run finishes and exits 0.
func TestRun_refusedLinks(t *testing.T) {
	t.Parallel()
	hits, base := serveRefusedSite(t)
	job := fmt.Sprintf(`name: refused
seeds: ["%[1]s/list"]
allowed_domains: ["127.0.0.1", "169.254.169.254"]
allow_private_networks: true
per_host_rps: 100
sitemaps: [{url: "%[1]s/sitemap.xml", kind: product}]
kinds:
  start: {links: [{css: "a.d", kind: product}, {css: "a.more", kind: start}]}
  product: {item: true, fields: {title: {css: "h1"}}}
`, base)
	stdout, _, out := runSpec(t, job)
	if got, want := storedPaths(t, out, base), "/d/1 /d/2 /d/3 /s/1 /s/2 /s/3"; got != want {
		t.Errorf("stored %s, want %s", got, want)
	}
	refused := map[string]bool{}
	for _, f := range readFailuresFile(t, out) {
		if !strings.Contains(f.URL, "169.254.169.254") {
			t.Errorf("%s recorded as failed (%s), want only the refused addresses", f.URL, f.Reason)
			continue
		}
		refused[f.URL] = true
		if !strings.Contains(f.Reason, "address not allowed (link-local or cloud metadata") || f.Transient {
			t.Errorf("%s failed for %q (transient %v), want a permanent failure naming the address rule", f.URL, f.Reason, f.Transient)
		}
	}
	for _, u := range []string{metadataURL, "http://169.254.169.254/s/meta", "http://169.254.169.254/list"} {
		if !refused[u] {
			t.Errorf("%s not recorded as failed\nstdout %s", u, stdout)
		}
	}
	for _, p := range []string{"/list", "/sitemap.xml"} {
		if n := hits.get(p); n != 1 {
			t.Errorf("%s fetched %d times, want once", p, n)
		}
	}
	for _, want := range []string{"job refused: finished", "details discovered 8 = stored 6 + failed 2 + skipped 0 + duplicates 0"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
}
