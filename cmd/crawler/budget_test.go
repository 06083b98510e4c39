package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
)

// calendarTrap is a site whose calendar never ends: /cal/N links to
// /cal/N+1 ("next month") and to three events, /ev/N-1 to /ev/N-3. It
// counts the pages it serves (robots.txt aside) and their bytes.
type calendarTrap struct {
	pages atomic.Int64
	bytes atomic.Int64
}

func (c *calendarTrap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		http.NotFound(w, r)
		return
	}
	var body string
	switch {
	case strings.HasPrefix(r.URL.Path, "/cal/"):
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/cal/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, "<html><body><h1>Month %d</h1><ul>", n)
		for e := 1; e <= 3; e++ {
			fmt.Fprintf(&b, `<li class="item"><a href="/ev/%d-%d">event %d</a></li>`, n, e, e)
		}
		fmt.Fprintf(&b, `</ul><a class="next" href="/cal/%d">next month</a></body></html>`, n+1)
		body = b.String()
	case strings.HasPrefix(r.URL.Path, "/ev/"):
		body = fmt.Sprintf("<html><body><h1>Event %s</h1><p>%s</p></body></html>", r.URL.Path, strings.Repeat("x", 500))
	default:
		http.NotFound(w, r)
		return
	}
	c.pages.Add(1)
	c.bytes.Add(int64(len(body)))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(body))
}

// serveTrap serves a calendar trap on loopback and returns it with its
// base URL.
func serveTrap(t *testing.T) (*calendarTrap, string) {
	t.Helper()
	c := &calendarTrap{}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return c, srv.URL
}

// trapJob is a job over the calendars at bases, with budget (a YAML flow
// map's inside).
func trapJob(name, budget string, bases ...string) string {
	seeds := make([]string, len(bases))
	for i, b := range bases {
		seeds[i] = fmt.Sprintf("%q", b+"/cal/1")
	}
	return fmt.Sprintf(`name: %s
seeds: [%s]
allow_private_networks: true
next_link:   {css: "a.next"}
detail_link: {css: ".item a"}
fields:
  title: {css: "h1"}
per_host_rps: 1000
per_host_concurrency: 16
budget: {%s}
`, name, strings.Join(seeds, ", "), budget)
}

// TestCluster_budgetEndsCalendarTrap crawls calendar traps, whose "next
// month" links never end, with a master and two slaves: each job ends on
// its budget, says which, and counts the links it left out as skipped.
// max_pages holds exactly across the cluster, as pages are counted where
// they are admitted; max_pages_per_host closes each host at its bound;
// max_bytes and max_duration, known only as pages are fetched, stop the
// round a tick after they are reached.
func TestCluster_budgetEndsCalendarTrap(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	pagesSite, pagesBase := serveTrap(t)
	hostA, baseA := serveTrap(t)
	hostB, baseB := serveTrap(t)
	bytesSite, bytesBase := serveTrap(t)
	env.startCluster(t, 2)
	env.submitYAML(t, "trap-pages", trapJob("trap-pages", "max_pages: 300", pagesBase))
	env.submitYAML(t, "trap-hosts", trapJob("trap-hosts", "max_pages_per_host: 60", baseA, baseB))
	env.submitYAML(t, "trap-bytes", trapJob("trap-bytes", "max_bytes: 60000", bytesBase))

	t.Run("max_pages", func(t *testing.T) {
		st := env.wait(t, "trap-pages", 3*time.Minute)
		checkBudgetEnd(t, st, "max_pages")
		fetched := st.Counters.ListPages + st.Counters.Stored + st.Counters.Failed
		if fetched != 300 || pagesSite.pages.Load() != 300 {
			t.Errorf("max_pages 300: the job counts %d pages fetched, the site served %d; want 300 both",
				fetched, pagesSite.pages.Load())
		}
		if st.Counters.SkippedMaxPages == 0 || st.Counters.Skipped == 0 {
			t.Errorf("no link counted as skipped past max_pages: %+v", st.Counters)
		}
	})
	t.Run("max_pages_per_host", func(t *testing.T) {
		st := env.wait(t, "trap-hosts", 3*time.Minute)
		if st.State != "finished" || st.BudgetReached != "" {
			t.Errorf("state %s, budget_reached %q; want finished, no job-wide budget reached", st.State, st.BudgetReached)
		}
		checkSettled(t, st.Counters)
		for i, site := range []*calendarTrap{hostA, hostB} {
			if n := site.pages.Load(); n != 60 {
				t.Errorf("host %d served %d pages, want max_pages_per_host 60", i, n)
			}
		}
		if st.Counters.HostsClosed != 2 || st.Counters.SkippedMaxPagesPerHost == 0 {
			t.Errorf("hosts_closed %d, skipped_max_pages_per_host %d; want 2 and some",
				st.Counters.HostsClosed, st.Counters.SkippedMaxPagesPerHost)
		}
	})
	t.Run("max_bytes", func(t *testing.T) {
		st := env.wait(t, "trap-bytes", 3*time.Minute)
		checkBudgetEnd(t, st, "max_bytes")
		if st.Counters.Bytes < 60000 || st.Counters.Bytes > bytesSite.bytes.Load() {
			t.Errorf("bytes %d: want at least max_bytes 60000, at most the %d the site served", st.Counters.Bytes, bytesSite.bytes.Load())
		}
		if st.Counters.SkippedMaxBytes == 0 {
			t.Errorf("nothing counted as skipped past max_bytes: %+v", st.Counters)
		}
	})
	t.Run("max_duration", func(t *testing.T) {
		_, base := serveTrap(t)
		env.submitYAML(t, "trap-time", trapJob("trap-time", "max_duration: 2s", base))
		st := env.wait(t, "trap-time", 3*time.Minute)
		checkBudgetEnd(t, st, "max_duration")
	})
}

// checkBudgetEnd checks that a job finished on budget, saying so, with
// every discovered link settled.
func checkBudgetEnd(t *testing.T, st client.Status, budget string) {
	t.Helper()
	if st.State != "finished" || st.BudgetReached != budget {
		t.Errorf("state %s, budget_reached %q; want finished on %s", st.State, st.BudgetReached, budget)
	}
	checkSettled(t, st.Counters)
}

// checkSettled checks discovered = stored + failed + skipped + duplicates
// + cancelled.
func checkSettled(t *testing.T, c client.Counters) {
	t.Helper()
	if c.Discovered != c.Settled() || c.Queued+c.InFlight != 0 {
		t.Errorf("discovered %d != settled %d (stored %d, failed %d, skipped %d, duplicates %d, cancelled %d), queued %d, in flight %d",
			c.Discovered, c.Settled(), c.Stored, c.Failed, c.Skipped, c.Duplicates, c.Cancelled, c.Queued, c.InFlight)
	}
}
