package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
)

// prioritySite serves one list page, /list, linking /hi/0../hi/(high-1)
// and /lo/0../lo/(low-1), interleaved, and the detail pages after a
// latency; it notes the order the detail pages are fetched in.
type prioritySite struct {
	high, low int
	latency   time.Duration

	mu      sync.Mutex
	fetched []string // detail paths, first fetches only
	seen    map[string]bool
}

func servePrioritySite(t *testing.T, high, low int, latency time.Duration) (*prioritySite, string) {
	t.Helper()
	s := &prioritySite{high: high, low: low, latency: latency, seen: map[string]bool{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func (s *prioritySite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	switch p := r.URL.Path; {
	case p == "/list":
		var b strings.Builder
		b.WriteString("<html><body>")
		for i := 0; i < max(s.high, s.low); i++ {
			if i < s.low {
				fmt.Fprintf(&b, `<a class="lo" href="/lo/%d">l</a>`, i)
			}
			if i < s.high {
				fmt.Fprintf(&b, `<a class="hi" href="/hi/%d">h</a>`, i)
			}
		}
		b.WriteString("</body></html>")
		_, _ = w.Write([]byte(b.String()))
	case strings.HasPrefix(p, "/hi/") || strings.HasPrefix(p, "/lo/"):
		time.Sleep(s.latency)
		s.mu.Lock()
		if !s.seen[p] {
			s.seen[p] = true
			s.fetched = append(s.fetched, p)
		}
		s.mu.Unlock()
		fmt.Fprintf(w, "<html><body><h1>%s</h1></body></html>", p)
	default:
		http.NotFound(w, r)
	}
}

// lowBefore is how many low pages were fetched before the n-th high page
// (1-based), or before the last one with n = 0; -1 if fewer high pages
// were fetched.
func (s *prioritySite) lowBefore(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == 0 {
		n = s.high
	}
	high, low := 0, 0
	for _, p := range s.fetched {
		if strings.HasPrefix(p, "/hi/") {
			if high++; high == n {
				return low
			}
		} else {
			low++
		}
	}
	return -1
}

// priorityJobHead is the head of the tests' job files over the site at
// base: its list page the seed, politeness out of the way.
func priorityJobHead(name, base string) string {
	return fmt.Sprintf(`name: %s
seeds: ["%s/list"]
allow_private_networks: true
obey_robots: false
per_host_rps: 10000
per_host_concurrency: 100
`, name, base)
}

// priorityKindsJob is a job over the site at base with item kinds top
// (the hi pages, at priority prio) and bulk (the lo pages). A page's
// links are admitted kind by kind in the order of their names, so in the
// order found the bulk pages would all be queued first.
func priorityKindsJob(name, base string, prio int) string {
	return priorityJobHead(name, base) + fmt.Sprintf(`kinds:
  start:
    links:
      - {css: "a.hi", kind: top}
      - {css: "a.lo", kind: bulk}
  top:  {item: true, priority: %d, fields: {title: {css: "h1", required: true}}}
  bulk: {item: true, fields: {title: {css: "h1", required: true}}}
`, prio)
}

// priorityShortJob is a job over the site at base that stores the pages
// of one class (hi or lo).
func priorityShortJob(name, base, class string) string {
	return priorityJobHead(name, base) + fmt.Sprintf(`detail_link: {css: "a.%s"}
fields: {title: {css: "h1", required: true}}
`, class)
}

// TestCluster_priority crawls with real processes (a master, one slave of
// concurrency 4, so that tasks wait on its queue): a job whose kind top
// has priority 5 beside kind bulk has every top page fetched before more
// than a slave's worth of bulk pages (in the order found, nearly all bulk
// pages would go first);
// and a job submitted with client submit --priority 5 beside a big job
// already running has its pages fetched ahead of the big job's: once its
// first page is, little more than what the slave held of the big job
// goes between.
func TestCluster_priority(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	mixed, mixedBase := servePrioritySite(t, 40, 160, 10*time.Millisecond)
	env.slaveArgs = []string{"--concurrency", "4"}
	env.startCluster(t, 1)
	const held = 16 // what one slave of concurrency 4 holds: 4 × 4

	env.submitYAML(t, "prio-mixed", priorityKindsJob("prio-mixed", mixedBase, 5))
	st := env.wait(t, "prio-mixed", 3*time.Minute)
	if st.Counters.Stored != 200 {
		t.Fatalf("prio-mixed stored %d, want 200: %+v", st.Counters.Stored, st.Counters)
	}
	if n := mixed.lowBefore(0); n < 0 || n > 2*held {
		t.Errorf("%d bulk pages fetched before the last top page, want at most %d (what the slave held when the top "+
			"pages were queued, with room to spare; in the order found all 160 would be)", n, 2*held)
	}

	jobs, jobsBase := servePrioritySite(t, 100, 600, 30*time.Millisecond)
	env.submitYAML(t, "prio-big", priorityShortJob("prio-big", jobsBase, "lo"))
	env.waitProgress(t, "prio-big", "the big job under way", func(c client.Counters) bool { return c.Stored > 0 })
	path := filepath.Join(t.TempDir(), "urgent.yaml")
	if err := os.WriteFile(path, []byte(priorityShortJob("prio-urgent", jobsBase, "hi")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := crawler(t, time.Minute, append([]string{"client", "submit", "--job", path, "--priority", "5"}, env.flags()...)...)
	if err != nil || strings.TrimSpace(out) != "prio-urgent" {
		t.Fatalf("client submit --priority 5: %v, %q, %s", err, out, errOut)
	}
	if st := env.wait(t, "prio-urgent", 3*time.Minute); st.Priority != 5 {
		t.Errorf("status of the urgent job: priority %d, want 5 (--priority)", st.Priority)
	}
	env.wait(t, "prio-big", 3*time.Minute)
	// between the urgent job's first page and its last, about the big
	// job's pages the slave held already; in turn (without priorities)
	// about one of the big job's a page of the urgent one's, 100
	first, last := jobs.lowBefore(1), jobs.lowBefore(0)
	if first < 0 || last-first > 50 {
		t.Errorf("%d of the big job's pages fetched between the urgent job's first and last (%d and %d before them), "+
			"want at most 50: without priorities the slave takes from both in turn", last-first, first, last)
	}
}

// TestCluster_priorityAging: a low band is not starved: with a short
// aging step (--priority-aging 100ms), lo pages (priority 0) are fetched
// while hi pages (priority 5) still wait, long before the hi band is
// empty.
func TestCluster_priorityAging(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	site, base := servePrioritySite(t, 600, 100, 20*time.Millisecond)
	env.slaveArgs = []string{"--concurrency", "4", "--priority-aging", "100ms"}
	env.startCluster(t, 1)
	env.submitYAML(t, "prio-aging", priorityKindsJob("prio-aging", base, 5))
	st := env.wait(t, "prio-aging", 3*time.Minute)
	if st.Counters.Stored != 700 {
		t.Fatalf("stored %d, want 700: %+v", st.Counters.Stored, st.Counters)
	}
	// 600 hi pages at 4 × 50/s take 3 s; the lo band gains 5 priorities
	// in 0.5 s and is served about then, and again each time it has
	// waited as long
	if n := site.lowBefore(300); n <= 0 {
		t.Errorf("%d lo pages fetched before the 300th hi page, want some: the lo band starved", n)
	}
}

// TestClientSubmit_badPriority: --priority out of range is refused before
// anything reaches Redis, with the flag named.
func TestClientSubmit_badPriority(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(path, []byte(priorityShortJob("bad-priority", "http://127.0.0.1:1", "hi")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := crawler(t, time.Minute, "client", "submit", "--job", path, "--priority", "200", "--redis", "redis://127.0.0.1:1/0")
	if err == nil || !strings.Contains(errOut, "--priority: 200 is not between -100 and 100") {
		t.Errorf("client submit --priority 200: %v, stderr %q; want refused, naming --priority", err, errOut)
	}
}
