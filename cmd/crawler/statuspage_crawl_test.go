package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/statuspage"
	"github.com/crawler-dev/crawler/statuspage/browsertest"
)

// crawlSite answers in 40 ms a page: with two slaves fetching two pages at
// once, its 600 detail pages take some seconds, several refreshes of the
// status page.
var crawlSite = demosite.Options{Details: 600, PerPage: 30, Overlap: 10, Delay: 40 * time.Millisecond}

// TestStatusPage_browserFollowsCrawl (issue 11): a real crawl, by
// processes (a master serving the status page with --http and two slaves,
// against a demo site with latency), watched in headless Chromium: the
// page loads, shows the job, and its progress advances without a reload
// until the job is finished.
//
// Screenshots are kept as test artifacts, in the directory
// $CRAWLER_TEST_ARTIFACTS when it is set, else in
// statuspage/testdata/artifacts of this repository (git-ignored):
// statuspage-crawl-running.png mid-crawl, statuspage-crawl-finished.png at
// the end.
func TestStatusPage_browserFollowsCrawl(t *testing.T) {
	t.Parallel()
	tab := browsertest.New(t)
	consoleErrors := browsertest.ConsoleErrors(t, tab)
	env := newClusterEnv(t)
	_, base := serveSite(t, crawlSite)
	hport := freePort(t)
	env.masterArgs = []string{"--http", "127.0.0.1:" + hport}
	env.slaveArgs = []string{"--concurrency", "2"}
	env.startMaster(t, "master")
	env.startSlave(t, 0)
	env.startSlave(t, 1)
	env.waitSlaves(t, 0, 1)
	env.submit(t, "watched", writeJob(t, "watched", base))

	row := `document.querySelector('tr[data-job="watched"]')`
	if err := chromedp.Do(tab, chromedp.Navigate("http://127.0.0.1:"+hport+"/"),
		chromedp.WaitVisible(`tr[data-job="watched"]`)); err != nil {
		t.Fatalf("the status page never showed the job: %v", err)
	}
	browsertest.Eval[bool](t, tab, `window.sameLoad = true`)
	seen := watchProgress(t, tab, row)
	// The slaves publish what they hold against their real capacity,
	// 4 × --concurrency 2.
	testenv.Eventually(t, time.Minute, "both slaves to publish their load", func() bool {
		return publishedSlaves(t, "http://127.0.0.1:"+hport+"/api/status", 8) == 2
	})
	browsertest.Screenshot(t, tab, "statuspage-crawl-running.png")
	testenv.Eventually(t, 3*time.Minute, "the page to show the job finished at 100%", func() bool {
		return browsertest.Eval[string](t, tab, row+`.querySelector('.state').textContent`) == "finished" &&
			browsertest.Eval[string](t, tab, row+`.querySelector('.pct').textContent`) == "100.0%"
	})
	browsertest.Screenshot(t, tab, "statuspage-crawl-finished.png")
	st := env.wait(t, "watched", time.Minute)
	if got := pageDone(t, tab, row); got != st.Counters.Settled() || got <= seen[len(seen)-1] {
		t.Errorf("the page shows %d pages done at the end (last seen running: %v); the job settled %d",
			got, seen, st.Counters.Settled())
	}
	if !browsertest.Eval[bool](t, tab, `window.sameLoad === true`) {
		t.Error("the page reloaded; it must update in place")
	}
	if e := consoleErrors(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// watchProgress waits until the page has shown the running job's pages
// done at three growing values, and returns them.
func watchProgress(t *testing.T, tab context.Context, row string) []int64 {
	t.Helper()
	var seen []int64
	testenv.Eventually(t, 2*time.Minute, "the page to show the running job's progress advancing", func() bool {
		state := browsertest.Eval[string](t, tab, row+`.querySelector('.state').textContent`)
		if state == "finished" {
			t.Fatalf("the job finished before the page showed it advancing (seen %v): the crawl is too fast to watch", seen)
		}
		if done := pageDone(t, tab, row); state == "running" && done > 0 && (len(seen) == 0 || done > seen[len(seen)-1]) {
			seen = append(seen, done)
		}
		return len(seen) >= 3
	})
	return seen
}

// pageDone reads the job row's pages done, written with thin spaces
// between thousands.
func pageDone(t *testing.T, tab context.Context, row string) int64 {
	t.Helper()
	n := browsertest.Eval[float64](t, tab, fmt.Sprintf(`Number(%s.querySelector('.done').textContent.replace(/\D/g, ''))`, row))
	return int64(n)
}

// publishedSlaves counts the live slaves in the status whose published
// load has the capacity want.
func publishedSlaves(t *testing.T, statusURL string, want int) int {
	t.Helper()
	body, err := testenv.Get(context.Background(), statusURL)
	if err != nil {
		return 0
	}
	var snap statuspage.Snapshot
	if err := json.Unmarshal(body, &snap); err != nil {
		t.Fatalf("api/status: %v", err)
	}
	n := 0
	for _, s := range snap.Slaves {
		if s.Live && s.Published && s.Capacity == want {
			n++
		}
	}
	return n
}
