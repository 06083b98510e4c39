package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/store"
)

// TestJSONL_KillSlave (issue 8): a slave writing its items to a JSON Lines
// file (--output) is killed with -9 at about 40% and started again with
// the same --id and the same file. The slave stores an item, then
// acknowledges its task, so at the kill the file already holds every item
// counted stored; after the restart the file is appended to, not
// truncated, and a redelivered task adds no second line. When the job has
// finished, every page counted stored is in the file exactly once.
func TestJSONL_KillSlave(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	site, base := serveSite(t, faultSite)
	const job = "killjsonl"
	jobFile := writeJob(t, job, base)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	startSlave := func(name string) *proc {
		args := append([]string{"slave", "--id", "0", "--output", out, "--concurrency", "8", "--log-format", "json"}, env.flags()...)
		return start(t, name, args...)
	}

	env.startMaster(t, "master")
	slave := startSlave("slave-0")
	env.waitSlaves(t, 0)
	env.submit(t, job, jobFile)
	env.waitProgress(t, job, "400 pages stored", func(c client.Counters) bool { return c.Stored >= 400 })
	if err := slave.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-slave.done

	st, err := jobStatus(context.Background(), env.rdb, env.keys, job)
	if err != nil {
		t.Fatal(err)
	}
	lines, torn := itemLines(t, out)
	if byURL := countURLs(lines); len(byURL) < int(st.Counters.Stored) {
		t.Errorf("at the kill: %d pages in %s (torn tail %q), %d counted stored; want every counted page in the file",
			len(byURL), out, torn, st.Counters.Stored)
	}
	t.Logf("at the kill: %d lines, %d counted stored, torn tail %d bytes", len(lines), st.Counters.Stored, len(torn))

	// Wait for the killed slave's registration (5 s lease) to lapse, so the
	// restart is a slave joining the live table anew. It need not wait: a
	// slave restarted sooner on the same host takes over at once the
	// registration its dead process left behind (membership.Claim), where
	// it used to exit with "id taken".
	env.waitSlaves(t)
	startSlave("slave-0-again")
	env.waitSlaves(t, 0)
	final := env.wait(t, job, 3*time.Minute)

	lines, torn = itemLines(t, out)
	if len(torn) != 0 {
		t.Errorf("%s ends in a torn line %q after a clean finish", out, torn)
	}
	checkFileCrawl(t, site, base, final, lines, failureURLs(t, store.FailuresPath(out)))
}

// checkFileCrawl checks a crawl written to files: each page of the site
// that should be stored is in the file exactly once, with its fields, and
// the gone ones are recorded as failed; the counters agree with the files.
// (checkCrawl's near-duplicate count is left out: a file keeps the first
// record of a page, and a task redelivered after its item was written may
// be counted with another near-duplicate verdict.)
func checkFileCrawl(t *testing.T, site *demosite.Site, base string, st client.Status, items []store.Item, failed []string) {
	t.Helper()
	c := st.Counters
	if st.State != "finished" || c.Queued != 0 || c.InFlight != 0 {
		t.Fatalf("state %q with %d queued, %d in flight; want finished, none", st.State, c.Queued, c.InFlight)
	}
	if c.Discovered != c.Settled() {
		t.Errorf("counters do not add up: discovered %d != stored %d + failed %d + duplicates %d",
			c.Discovered, c.Stored, c.Failed, c.Duplicates)
	}
	byURL, failedURL := countURLs(items), map[string]int{}
	for _, u := range failed {
		failedURL[u]++
	}
	stored, gone := 0, 0
	for path, outcome := range site.Expected() {
		switch url := base + path; outcome {
		case demosite.Stored:
			stored++
			if byURL[url] != 1 {
				t.Errorf("%s is in the file %d times, want once", url, byURL[url])
			}
		case demosite.Gone:
			gone++
			if byURL[url] != 0 || failedURL[url] != 1 {
				t.Errorf("gone page %s: %d items, %d failure records; want 0 and 1", url, byURL[url], failedURL[url])
			}
		}
	}
	if len(items) != stored || c.Stored != int64(stored) {
		t.Errorf("%d lines in the file, %d counted stored; want %d", len(items), c.Stored, stored)
	}
	if len(failed) != gone || c.Failed != int64(gone) {
		t.Errorf("%d failure records, %d counted failed; want %d", len(failed), c.Failed, gone)
	}
	for _, it := range items {
		checkItem(t, base, it)
	}
}

// itemLines parses the file line by line, failing on a whole line that is
// not an item; it returns the items and what follows the last newline (a
// torn line, when a write was cut short).
func itemLines(t *testing.T, path string) ([]store.Item, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := bytes.LastIndexByte(b, '\n') + 1
	var items []store.Item
	for i, line := range bytes.Split(b[:end], []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var it store.Item
		if err := json.Unmarshal(line, &it); err != nil || it.URL == "" {
			t.Fatalf("%s line %d %.200q is not an item: %v", path, i+1, line, err)
		}
		items = append(items, it)
	}
	return items, b[end:]
}

// failureURLs reads the URLs of a failures file, each line parsed.
func failureURLs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var f store.Failure
		if err := json.Unmarshal(line, &f); err != nil || f.Reason == "" {
			t.Fatalf("%s line %d %q is not a failure with a reason: %v", path, i+1, line, err)
		}
		urls = append(urls, f.URL)
	}
	return urls
}

func countURLs(items []store.Item) map[string]int {
	n := map[string]int{}
	for _, it := range items {
		n[it.URL]++
	}
	return n
}
