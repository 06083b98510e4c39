package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/store"
)

// serveHostileSite serves issue 18's hostile page as every detail page: a
// list page linking to details pages of 300 nested <div> around a link,
// on which goquery takes hours for "p div div div div div a".
func serveHostileSite(t *testing.T, details int) string {
	t.Helper()
	deep := strings.Repeat("<div>", 300) + `<a href="/x">x</a>` + strings.Repeat("</div>", 300)
	mux := http.NewServeMux()
	mux.HandleFunc("/list", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>")
		for i := range details {
			fmt.Fprintf(w, `<a class="d" href="/p/%d">%d</a>`, i, i)
		}
		fmt.Fprint(w, "</body></html>")
	})
	mux.HandleFunc("/p/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body><h1>%s</h1>%s</body></html>", r.URL.Path, deep)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// hostileJob writes a job for the hostile site whose fields are issue
// 18's CSS selector (linear here) and an XPath that walks the deep tree
// many times, past any page's work budget.
func hostileJob(t *testing.T, base string) string {
	t.Helper()
	job := filepath.Join(t.TempDir(), "hostile.yaml")
	spec := fmt.Sprintf(`name: hostile
seeds: [%q]
allow_private_networks: true
obey_robots: false
per_host_rps: 20
per_host_concurrency: 4
detail_link: {css: "a.d", attr: href}
fields:
  title: {css: "h1"}
  deep: {css: "p div div div div div a"}
  walk: {xpath: "//div//div//div//div//div//a"}
`, base+"/list")
	if err := os.WriteFile(job, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return job
}

// runReturns runs crawler to its end within bound, failing the test when
// it had to be killed.
func runReturns(t *testing.T, bound time.Duration, args ...string) (stdout, stderr string, took time.Duration) {
	t.Helper()
	binary(t) // built before the clock starts
	began := time.Now()
	stdout, stderr, err := crawler(t, bound, args...)
	took = time.Since(began)
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() < 0) {
		t.Fatalf("crawler %s did not return by itself within %s (%v)\nstdout %s\nstderr %s",
			strings.Join(args, " "), bound, err, stdout, tail(stderr, 4000))
	}
	t.Logf("crawler %s returned after %s (exit %v)", strings.Join(args, " "), took.Round(time.Millisecond), err)
	return stdout, stderr, took
}

// TestRun_hostileSelectors (issue 18, item 8): each detail page of the
// hostile site passes its extraction budget and is failed with kind
// extract_limit (it was stored with empty fields).
func TestRun_hostileSelectors(t *testing.T) {
	t.Parallel()
	const details = 4
	job := hostileJob(t, serveHostileSite(t, details))
	out := filepath.Join(t.TempDir(), "items.jsonl")
	stdout, stderr, _ := runReturns(t, 3*time.Minute, "run", "--job", job, "-o", out, "--log-level", "warn")
	if items := readItems(t, out); len(items) > 0 {
		t.Errorf("%d items stored, e.g. %+v; every page passes its extraction budget", len(items), items[0].Fields)
	}
	failures := readFailureLines(t, store.FailuresPath(out))
	if len(failures) != details {
		t.Errorf("%d failures recorded, want %d\nstdout %s\nstderr %s", len(failures), details, stdout, tail(stderr, 4000))
	}
	for _, f := range failures {
		if f.Kind != extract.FailureLimit || !strings.Contains(f.Reason, extract.ErrLimit.Error()) {
			t.Errorf("%s failed with kind %q (%s), want %q", f.URL, f.Kind, f.Reason, extract.FailureLimit)
		}
	}
}

// TestRun_hostileTimeout (issue 18, item 8): `run --timeout 10s` on a
// hostile site with more pages than it can fetch in that time returns
// once its timeout and the slaves' drain pass: extraction heeds the stop.
// The bound: the timeout, the drain (10s: requests on the wire finish,
// and extraction stops when the drain ends) and 40s for a loaded machine.
// Before extraction heeded the stop, this run took 90s on 2 busy cores.
func TestRun_hostileTimeout(t *testing.T) {
	t.Parallel()
	job := hostileJob(t, serveHostileSite(t, 300))
	out := filepath.Join(t.TempDir(), "items.jsonl")
	runReturns(t, time.Minute, "run", "--job", job, "-o", out, "--timeout", "10s", "--log-level", "warn")
	for _, f := range readFailureLines(t, store.FailuresPath(out)) {
		if f.Kind != extract.FailureLimit {
			t.Errorf("%s failed with kind %q (%s), want %q", f.URL, f.Kind, f.Reason, extract.FailureLimit)
		}
	}
}

// readFailureLines reads a failures file of JSON lines.
func readFailureLines(t *testing.T, path string) []store.Failure {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Failure
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var f store.Failure
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("failure line %q: %v", line, err)
		}
		out = append(out, f)
	}
	return out
}
