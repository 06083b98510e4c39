package main

import (
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
)

// TestCluster_RobotsAndNotHTML crawls, with real master and slave
// processes, a site whose robots.txt disallows some detail pages and some
// of whose detail pages are PDFs: every counter equals what a correct crawl
// counts (demosite.Tally), the disallowed pages are never requested and
// never discovered, the PDFs are skipped and kept in failed with kind
// not_html, and discovered = stored + failed + skipped + duplicates +
// cancelled.
func TestCluster_RobotsAndNotHTML(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	site, base := serveSite(t, demosite.Options{Details: 300, DisallowEvery: 9, PDFEvery: 13})
	jobFile := writeJob(t, "skips", base)
	env.startMaster(t, "master")
	env.startSlave(t, 0)
	env.startSlave(t, 1)
	env.waitSlaves(t, 0, 1)
	env.submit(t, "skips", jobFile)
	st := env.wait(t, "skips", 3*time.Minute)

	checkTally(t, st.Counters, site.Tally())
	items := env.results(t, "skips")
	stored := map[string]bool{}
	for _, it := range items {
		stored[it.URL] = true
	}
	kinds := env.failureKinds(t, "skips")
	for path, outcome := range site.Expected() {
		url := base + path
		switch outcome {
		case demosite.Disallowed:
			if n := site.Hits(path); n != 0 || stored[url] || kinds[url] != "" {
				t.Errorf("disallowed %s: requested %d times, stored %v, failed as %q; want none", path, n, stored[url], kinds[url])
			}
		case demosite.NotHTML:
			if stored[url] || kinds[url] != "not_html" {
				t.Errorf("PDF %s: stored %v, failed as %q; want skipped, kind not_html", path, stored[url], kinds[url])
			}
		}
	}
}

// checkTally compares a finished job's counters with what a correct crawl
// of the site counts.
func checkTally(t *testing.T, c client.Counters, want demosite.Tally) {
	t.Helper()
	for _, f := range []struct {
		name      string
		got, want int64
	}{
		{"discovered", c.Discovered, int64(want.Discovered)},
		{"stored", c.Stored, int64(want.Stored)},
		{"failed", c.Failed, int64(want.Failed)},
		{"skipped", c.Skipped, int64(want.SkippedNotHTML)},
		{"skipped_not_html", c.SkippedNotHTML, int64(want.SkippedNotHTML)},
		{"duplicates", c.Duplicates, int64(want.Duplicates)},
		{"robots_disallowed", c.RobotsDisallowed, int64(want.RobotsDisallowed)},
		{"offsite", c.Offsite, int64(want.Offsite)},
		{"cancelled", c.Cancelled, 0},
	} {
		if f.got != f.want {
			t.Errorf("%s = %d, want %d", f.name, f.got, f.want)
		}
	}
	if want.RobotsDisallowed == 0 || want.SkippedNotHTML == 0 {
		t.Fatalf("the site has %d disallowed and %d PDF links: the test checks nothing", want.RobotsDisallowed, want.SkippedNotHTML)
	}
	if c.Discovered != c.Stored+c.Failed+c.Skipped+c.Duplicates+c.Cancelled {
		t.Errorf("discovered %d != stored %d + failed %d + skipped %d + duplicates %d + cancelled %d",
			c.Discovered, c.Stored, c.Failed, c.Skipped, c.Duplicates, c.Cancelled)
	}
}

// failureKinds reads the job's failed collection: URL -> kind.
func (e clusterEnv) failureKinds(t *testing.T, job string) map[string]string {
	t.Helper()
	kinds := map[string]string{}
	for _, f := range e.failures(t, job) {
		kinds[f.URL] = f.Kind
	}
	return kinds
}
