package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// pauseSite is a demo site that logs every detail request: how often each
// page was asked for, how many arrived once the first free ones were
// served, and when the last one came. Those after the first free are held
// on the wire until the test releases them.
type pauseSite struct {
	site     *demosite.Site
	free     int64
	served   atomic.Int64 // detail requests answered without holding
	arrived  atomic.Int64 // detail requests after the first free ones
	held     atomic.Int64 // detail requests holding the wire now
	last     atomic.Int64 // when the last detail request came (unix ns)
	released chan struct{}
	once     sync.Once

	mu    sync.Mutex
	asked map[string]int // detail path -> requests
}

func newPauseSite(t *testing.T, details int, free int64) (*pauseSite, string) {
	t.Helper()
	return servePauseSite(t, demosite.Options{Details: details, PerPage: 30, GoneEvery: -1, FlakyEvery: -1}, free)
}

// servePauseSite serves a pauseSite over the demo site of opts.
func servePauseSite(t *testing.T, opts demosite.Options, free int64) (*pauseSite, string) {
	t.Helper()
	s := &pauseSite{site: demosite.New(opts), free: free, released: make(chan struct{}), asked: map[string]int{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	t.Cleanup(s.release)
	return s, srv.URL
}

func (s *pauseSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/detail/") {
		s.site.ServeHTTP(w, r)
		return
	}
	s.last.Store(time.Now().UnixNano())
	s.mu.Lock()
	s.asked[r.URL.Path]++
	s.mu.Unlock()
	if s.served.Add(1) > s.free {
		s.arrived.Add(1)
		s.held.Add(1)
		<-s.released
		s.held.Add(-1)
	}
	s.site.ServeHTTP(w, r)
}

func (s *pauseSite) release() { s.once.Do(func() { close(s.released) }) }

// quietFor reports whether no detail request came for d.
func (s *pauseSite) quietFor(d time.Duration) bool {
	return time.Since(time.Unix(0, s.last.Load())) >= d
}

// askedTwice returns the detail paths requested more than once, and how
// many paths were requested.
func (s *pauseSite) askedTwice() (twice []string, paths int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, n := range s.asked {
		if n > 1 {
			twice = append(twice, p)
		}
	}
	return twice, len(s.asked)
}

// TestClient_pauseResume (issue 32): a job paused mid-crawl by client
// pause (through Redis) starts no new request: the two on the wire
// finish, the tasks the slaves held are handed back, and the site's log
// stays quiet while the job shows paused in client status and jobs and
// in the master's metrics. Resumed through the API (client resume --api),
// it finishes with every page requested and stored exactly once and its
// counters adding up.
func TestClient_pauseResume(t *testing.T) {
	t.Parallel()
	const details = 300
	dir := t.TempDir()
	tokens, writeFile := filepath.Join(dir, "tokens"), filepath.Join(dir, "write")
	writeTokenFile(t, tokens, "write "+apiWrite+"\n")
	writeTokenFile(t, writeFile, apiWrite+"\n")
	mport := freePort(t)
	c := startAPICluster(t, 2, "--api-tokens", tokens, "--metrics", "127.0.0.1:"+mport)
	env := c.env
	viaAPI := []string{"--api", strings.TrimSuffix(c.base, "/api/v1/"), "--token-file", writeFile}
	site, base := newPauseSite(t, details, 20)
	env.submitYAML(t, "pauseme", demosite.Job{Name: "pauseme", Seeds: []string{base + "/list/1"}, PerHostRPS: 1000,
		PerHostConcurrency: 2, Capacity: 100_000}.YAML())
	env.waitProgress(t, "pauseme", "two requests held on the wire", func(client.Counters) bool { return site.held.Load() == 2 })

	pausedAt := time.Now()
	out := mustClient(t, append([]string{"pause", "--job", "pauseme"}, env.flags()...)...)
	if !strings.Contains(out, "job pauseme: paused (it was running)") {
		t.Errorf("client pause printed %q", out)
	}
	// The slaves hand back what they hold but have not sent: only the two
	// requests on the wire stay in flight.
	env.waitProgress(t, "pauseme", "all but the two requests on the wire handed back", func(n client.Counters) bool {
		return n.InFlight == 2 && n.Queued > 0
	})
	// What the "within 2 s" asks, measured, not asserted: from the
	// pause command to the slaves holding nothing unsent of the job.
	t.Logf("the slaves handed back the paused job's unsent tasks %v after client pause started", time.Since(pausedAt).Round(time.Millisecond))
	site.release()
	env.waitProgress(t, "pauseme", "the two requests on the wire stored", func(n client.Counters) bool {
		return n.InFlight == 0 && n.Stored == site.free+2
	})
	testenv.Eventually(t, time.Minute, "the site quiet for 3s", func() bool { return site.quietFor(3 * time.Second) })
	if got := site.arrived.Load(); got != 2 {
		t.Errorf("the site got %d detail requests after the first %d, want only the 2 on the wire at the pause", got, site.free)
	}
	checkPausedShown(t, env, "http://127.0.0.1:"+mport+"/metrics")

	if out := mustClient(t, append([]string{"resume", "--job", "pauseme"}, viaAPI...)...); !strings.Contains(out, "job pauseme: resumed (running)") {
		t.Errorf("client resume --api printed %q", out)
	}
	if _, errOut, err := crawler(t, time.Minute, append([]string{"client", "resume", "--job", "pauseme"}, viaAPI...)...); err == nil ||
		!strings.Contains(errOut, "not paused (409)") {
		t.Errorf("a second resume: %v, stderr %q; want a 409 saying the job is not paused", err, errOut)
	}
	var st client.Status // waited for over the API: client status --wait --api
	if err := json.Unmarshal([]byte(mustClient(t, append([]string{"status", "--job", "pauseme", "--wait", "--timeout", "3m", "--json"},
		viaAPI...)...)), &st); err != nil {
		t.Fatal(err)
	}
	n := st.Counters
	if n.Stored != details || n.Discovered != n.Settled() || n.Failed+n.Cancelled+n.Skipped != 0 || n.Queued+n.InFlight != 0 {
		t.Errorf("after resume: %+v; want %d stored, discovered = settled, nothing failed, cancelled or left", n, details)
	}
	twice, paths := site.askedTwice()
	if paths != details || len(twice) > 0 {
		t.Errorf("the site was asked for %d detail pages (want %d), these more than once: %v", paths, details, twice)
	}
	if items := env.results(t, "pauseme"); len(items) != details {
		t.Errorf("%d items stored, want %d", len(items), details)
	}
}

// checkPausedShown checks that client status and client jobs say paused,
// and the master's metrics too.
func checkPausedShown(t *testing.T, env clusterEnv, metricsURL string) {
	t.Helper()
	st := mustClient(t, append([]string{"status", "--job", "pauseme", "--json"}, env.flags()...)...)
	if !strings.Contains(st, `"state":"paused"`) || !strings.Contains(st, `"paused_at":`) {
		t.Errorf("client status --json: %s", st)
	}
	if jobs := mustClient(t, append([]string{"jobs"}, env.flags()...)...); !strings.Contains(jobs, "paused") {
		t.Errorf("client jobs does not say paused:\n%s", jobs)
	}
	want := `crawler_job_state{job="pauseme",state="paused"} 1`
	testenv.Eventually(t, time.Minute, "the master's metrics to say paused", func() bool {
		return strings.Contains(getText(t, metricsURL), want)
	})
}

// TestAPI_cancelWhilePaused (issue 32): a cancel asked of a paused job
// wins over a resume racing it: the resume is refused with 409 and
// changes nothing, and the job ends cancelled, not paused or running:
// the two requests on the wire at the pause stored, the rest cancelled.
func TestAPI_cancelWhilePaused(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "tokens")
	writeTokenFile(t, tokens, "read "+apiRead+"\nwrite "+apiWrite+"\n")
	c := startAPICluster(t, 1, "--api-tokens", tokens)
	site, base := newPauseSite(t, 60, 0)
	c.want(t, 201, "POST", "jobs", apiWrite, demosite.Job{Name: "racer", Seeds: []string{base + "/list/1"},
		PerHostRPS: 1000, PerHostConcurrency: 2, Capacity: 10_000}.YAML())
	testenv.Eventually(t, time.Minute, "two requests held on the wire", func() bool { return site.held.Load() == 2 })
	if got := c.want(t, 200, "POST", "jobs/racer/pause", apiWrite, ""); !strings.Contains(got, `"state":"running"`) {
		t.Errorf("pause replied %s", got)
	}
	c.want(t, 409, "POST", "jobs/racer/pause", apiWrite, "")
	testenv.Eventually(t, time.Minute, "the slave to hand back all but the two on the wire", func() bool {
		n := c.status(t, "racer").Counters
		return n.InFlight == 2 && n.Queued > 0
	})
	c.want(t, 200, "POST", "jobs/racer/cancel", apiWrite, "")
	if got := c.want(t, 409, "POST", "jobs/racer/resume", apiWrite, ""); !strings.Contains(got, "cancel") {
		t.Errorf("resume during the cancel replied %s, want a word about the cancel", got)
	}
	if st := c.status(t, "racer"); st.State != "paused" || !st.Cancelling {
		t.Errorf("after the refused resume: state %s, cancelling %v; want paused, cancelling", st.State, st.Cancelling)
	}
	site.release() // the two on the wire finish; the cancel can end the job
	st := c.waitFinished(t, "racer")
	n := st.Counters
	if st.CancelledAt == "" || st.PausedAt != "" || n.Discovered != n.Settled() || n.Stored != 2 || n.Cancelled != n.Routed-2 {
		t.Errorf("after the cancel: %+v", st)
	}
	c.want(t, 409, "POST", "jobs/racer/resume", apiWrite, "")
}

// mustClient runs a client command and returns its stdout.
func mustClient(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := crawler(t, time.Minute, append([]string{"client"}, args...)...)
	if err != nil {
		t.Fatalf("client %s: %v: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// getText GETs url and returns its body.
func getText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
