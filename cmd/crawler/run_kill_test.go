package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestRun_KillAndRunAgain: `crawler run` killed -9 mid-crawl and run again
// with the same -o starts the crawl over (its own Redis died with it), says
// so, and adds no second line for a page the first run wrote: every page
// is in the file exactly once.
func TestRun_KillAndRunAgain(t *testing.T) {
	t.Parallel()
	site, base := serveSite(t, demosite.Options{Details: 300, PerPage: 30, Overlap: 10, Delay: 20 * time.Millisecond})
	job := writeJob(t, "again", base)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	args := []string{"run", "--job", job, "-o", out, "--slaves", "2", "--concurrency", "2"}

	first := start(t, "run", args...)
	testenv.Eventually(t, 2*time.Minute, "100 items written", func() bool {
		b, _ := os.ReadFile(out)
		return strings.Count(string(b), "\n") >= 100
	})
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-first.done
	before, _ := itemLines(t, out)

	stdout, stderr, err := crawler(t, 3*time.Minute, args...)
	if err != nil {
		t.Fatalf("second run: %v\nstdout %s\nstderr %s", err, stdout, stderr)
	}
	if said := stdout + stderr; !strings.Contains(said, "starting the crawl over") {
		t.Errorf("the second run does not say it starts over; it said:\n%s", tail(said, 3000))
	}
	items, torn := itemLines(t, out)
	if len(torn) != 0 {
		t.Errorf("torn tail %q after a clean run", torn)
	}
	byURL := countURLs(items)
	want := 0
	for path, outcome := range site.Expected() {
		if outcome != demosite.Stored {
			continue
		}
		want++
		if n := byURL[base+path]; n != 1 {
			t.Errorf("%s is in the file %d times, want once", path, n)
		}
	}
	t.Logf("first run wrote %d items before the kill; the file holds %d, want %d", len(before), len(items), want)
	if len(items) != want {
		t.Errorf("%d lines, want %d", len(items), want)
	}
}
