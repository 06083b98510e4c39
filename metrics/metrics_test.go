package metrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

// timeoutErr is a net.Error-like error that timed out.
type timeoutErr struct{}

func (timeoutErr) Error() string { return "i/o timeout" }
func (timeoutErr) Timeout() bool { return true }

// TestServe_scrape records through every recorder, scrapes /metrics over
// HTTP and checks each value in the exposition.
func TestServe_scrape(t *testing.T) {
	r := newRegistry(t, DefaultOptions())
	base := serve(t, r)
	slave := r.Node(RoleSlave, 3)
	master := r.Node(RoleMaster, 7) // the ID is ignored for a master

	f := slave.Fetch()
	f.Observe("example.com", 200, 1000, 100*time.Millisecond, nil)
	f.Observe("Example.COM", 204, 24, 300*time.Millisecond, nil)
	f.Observe("example.com", 503, 10, time.Second, errors.New("503 Service Unavailable"))
	f.Observe("example.com", 0, 0, 2*time.Second, fmt.Errorf("fetch: %w", context.DeadlineExceeded))
	f.Observe("example.com", 0, 0, time.Second, fmt.Errorf("fetch: %w", timeoutErr{}))
	f.Observe("example.com", 0, 0, time.Millisecond, errors.New("connection refused"))
	f.InFlight(+1)
	f.InFlight(+1)
	f.InFlight(-1)
	slave.Retried(2)
	slave.Retried(1)
	slave.Retried(0)
	slave.Stole(4)
	slave.Stole(0)
	slave.Failed("http")
	slave.Failed("http")
	slave.Failed("extract")
	slave.Politeness().Waited("example.com", 250*time.Millisecond, "rate")
	slave.Politeness().Waited("example.com", 2*time.Second, "paused")
	slave.Politeness().Waited("example.com", 50*time.Millisecond, "rate")
	slave.Robots().Disallowed("example.com")
	slave.Robots().Fetched(404, nil)
	slave.Robots().Fetched(0, errors.New("refused"))

	master.Fetch().Observe("example.com", 200, 5000, 20*time.Millisecond, nil)
	master.Dedup().Admitted("news", 10, 3)
	master.Dedup().Admitted("news", 5, 0)
	master.Dedup().Admitted("blog", 0, 4)
	r.Queues().Set("news", []int64{3, 0, 0}, []int64{1, 0, 2})
	r.Proxies().SetStates(map[string]int{"usable": 5, "dead": 1})

	m := scrape(t, base)
	s3 := []string{"role=slave", "slave=3"}
	at := func(more ...string) []string { return append(append([]string(nil), s3...), more...) }

	t.Run("fetch", func(t *testing.T) {
		m.expect(t, 2, "crawler_fetch_pages_total", at("host=example.com", "status=2xx")...)
		m.expect(t, 1, "crawler_fetch_pages_total", at("host=example.com", "status=5xx")...)
		m.expect(t, 2, "crawler_fetch_pages_total", at("host=example.com", "status=timeout")...)
		m.expect(t, 1, "crawler_fetch_pages_total", at("host=example.com", "status=error")...)
		m.expect(t, 1034, "crawler_fetch_bytes_total", at("host=example.com")...)
		m.expect(t, 2, "crawler_fetch_duration_seconds", at("status=2xx")...)
		if sum := m.series("crawler_fetch_duration_seconds", at("status=2xx")...).GetHistogram().GetSampleSum(); math.Abs(sum-0.4) > 1e-9 {
			t.Errorf("2xx duration sum = %v, want 0.4", sum)
		}
		m.expect(t, 1, "crawler_fetch_in_flight", s3...)
		m.expect(t, 1, "crawler_fetch_pages_total", "role=master", "slave=", "host=example.com", "status=2xx")
		if n := m.count("crawler_fetch_pages_total"); n != 5 {
			t.Errorf("%d page series, want 5 (a series only for a class seen):\n%s", n, m.dump("crawler_fetch_pages_total"))
		}
	})
	t.Run("retries and failures", func(t *testing.T) {
		m.expect(t, 3, "crawler_retries_total", s3...)
		m.expect(t, 4, "crawler_tasks_stolen_total", s3...)
		m.expect(t, 2, "crawler_failures_total", at("kind=http")...)
		m.expect(t, 1, "crawler_failures_total", at("kind=extract")...)
	})
	t.Run("politeness and robots", func(t *testing.T) {
		m.expect(t, 2, "crawler_politeness_waits_total", at("host=example.com", "reason=rate")...)
		m.expect(t, 1, "crawler_politeness_waits_total", at("host=example.com", "reason=paused")...)
		m.expect(t, 2, "crawler_politeness_wait_seconds", at("reason=rate")...)
		m.expect(t, 1, "crawler_robots_disallowed_total", at("host=example.com")...)
		m.expect(t, 1, "crawler_robots_fetches_total", at("status=4xx")...)
		m.expect(t, 1, "crawler_robots_fetches_total", at("status=error")...)
	})
	t.Run("dedup", func(t *testing.T) {
		mk := []string{"role=master", "slave="}
		m.expect(t, 15, "crawler_dedup_urls_total", append(mk, "job=news", "result=new")...)
		m.expect(t, 3, "crawler_dedup_urls_total", append(mk, "job=news", "result=duplicate")...)
		m.expect(t, 4, "crawler_dedup_urls_total", append(mk, "job=blog", "result=duplicate")...)
	})
	t.Run("queues", func(t *testing.T) {
		m.expect(t, 3, "crawler_queue_tasks", "job=news", "slave=0", "state=queued")
		m.expect(t, 1, "crawler_queue_tasks", "job=news", "slave=0", "state=inflight")
		m.expect(t, 2, "crawler_queue_tasks", "job=news", "slave=2", "state=inflight")
		if s := m.series("crawler_queue_tasks", "job=news", "slave=1", "state=queued"); s != nil {
			t.Error("slave 1 never had a task, yet it has a series")
		}
	})
	t.Run("proxies", func(t *testing.T) {
		m.expect(t, 5, "crawler_proxies", "state=usable")
		m.expect(t, 1, "crawler_proxies", "state=dead")
	})
	t.Run("runtime", func(t *testing.T) {
		if m["go_goroutines"] == nil || m["process_cpu_seconds_total"] == nil {
			t.Error("no go_goroutines or process_cpu_seconds_total with Options.Runtime")
		}
	})
	t.Run("healthz", func(t *testing.T) {
		status, _, body := get(t, base+"/healthz")
		if status != http.StatusOK || body != "ok\n" {
			t.Errorf("GET /healthz: %d %q", status, body)
		}
	})
}

// TestQueues_update checks that a drained queue reads 0, a forgotten job
// goes away and jobs past the bound add up under "other".
func TestQueues_update(t *testing.T) {
	opts := DefaultOptions()
	opts.Jobs = 1
	r := newRegistry(t, opts)
	q := r.Queues()
	q.Set("news", []int64{4, 2}, []int64{1, 0})
	q.Set("news", []int64{0, 2}, []int64{0, 0})
	q.Set("blog", []int64{1, 0}, []int64{0, 0})
	q.Set("wiki", []int64{5, 0}, []int64{0, 0})
	m := gather(t, r)
	m.expect(t, 0, "crawler_queue_tasks", "job=news", "slave=0", "state=queued")
	m.expect(t, 2, "crawler_queue_tasks", "job=news", "slave=1", "state=queued")
	m.expect(t, 6, "crawler_queue_tasks", "job=other", "slave=0", "state=queued")

	q.Forget("news")
	q.Forget("wiki")
	m = gather(t, r)
	if s := m.series("crawler_queue_tasks", "job=news", "slave=1", "state=queued"); s != nil {
		t.Error("a forgotten job still has series")
	}
	m.expect(t, 1, "crawler_queue_tasks", "job=other", "slave=0", "state=queued")
}

// TestNearDup_update: a job's gauges are replaced by each Set, jobs past
// the bound add up under other, and a forgotten job's series go away.
func TestNearDup_update(t *testing.T) {
	opts := DefaultOptions()
	opts.Jobs = 1
	r := newRegistry(t, opts)
	n := r.Node(RoleSlave, 3).NearDup()
	n.Set("news", 10, 1000)
	n.Set("news", 12, 1200)
	n.Set("blog", 5, 500)
	n.Set("wiki", 7, 700)
	node := []string{"role=slave", "slave=3"}
	m := gather(t, r)
	m.expect(t, 12, "crawler_neardup_mirror_entries", append(node, "job=news")...)
	m.expect(t, 1200, "crawler_neardup_mirror_bytes", append(node, "job=news")...)
	m.expect(t, 12, "crawler_neardup_mirror_entries", append(node, "job=other")...)
	m.expect(t, 1200, "crawler_neardup_mirror_bytes", append(node, "job=other")...)

	n.Forget("news")
	n.Forget("wiki")
	m = gather(t, r)
	if s := m.series("crawler_neardup_mirror_entries", append(node, "job=news")...); s != nil {
		t.Error("a forgotten job still has series")
	}
	m.expect(t, 5, "crawler_neardup_mirror_entries", append(node, "job=other")...)
	n.Forget("blog")
	if c := gather(t, r).count("crawler_neardup_mirror_bytes"); c != 0 {
		t.Errorf("%d series left once every job is forgotten", c)
	}
}

// TestProxies_SetStates checks that a state missing from a later count
// reads 0 and that counts replace, not add.
func TestProxies_SetStates(t *testing.T) {
	r := newRegistry(t, DefaultOptions())
	r.Proxies().SetStates(map[string]int{"usable": 5, "dead": 1})
	r.Proxies().SetStates(map[string]int{"usable": 4, "new": 2})
	m := gather(t, r)
	m.expect(t, 4, "crawler_proxies", "state=usable")
	m.expect(t, 2, "crawler_proxies", "state=new")
	m.expect(t, 0, "crawler_proxies", "state=dead")
}

// TestRegistry_Node checks that a node is made once and that registries do
// not share series.
func TestRegistry_Node(t *testing.T) {
	a, b := newRegistry(t, DefaultOptions()), newRegistry(t, DefaultOptions())
	first, again := a.Node(RoleSlave, 1), a.Node(RoleSlave, 1)
	if first != again || a.Node(RoleMaster, 1) != a.Node(RoleMaster, 2) {
		t.Error("Node made twice for the same role and slave")
	}
	if a.Node(RoleSlave, 1) == a.Node(RoleSlave, 2) {
		t.Error("two slaves share a Node")
	}
	a.Node(RoleSlave, 1).Retried(5)
	b.Node(RoleSlave, 1).Retried(1)
	gather(t, a).expect(t, 5, "crawler_retries_total", "role=slave", "slave=1")
	gather(t, b).expect(t, 1, "crawler_retries_total", "role=slave", "slave=1")
}

func TestOptions_Validate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*Options)
		field string
	}{
		{"defaults", func(*Options) {}, ""},
		{"no host labels", func(o *Options) { o.Hosts = 0 }, ""},
		{"negative hosts", func(o *Options) { o.Hosts = -1 }, "Hosts"},
		{"too many hosts", func(o *Options) { o.Hosts = 1001 }, "Hosts"},
		{"too many jobs", func(o *Options) { o.Jobs = 5000 }, "Jobs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			tc.edit(&o)
			err := o.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.field+":") {
				t.Fatalf("Validate = %v, want an error naming %s", err, tc.field)
			}
			if _, err := New(o); err == nil {
				t.Error("New accepted invalid options")
			}
		})
	}
}

func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		status int
		err    error
		want   string
	}{
		{200, nil, "2xx"},
		{101, nil, "1xx"},
		{301, nil, "3xx"},
		{429, errors.New("too many"), "4xx"},
		{599, nil, "5xx"},
		{600, nil, "error"},
		{0, nil, "error"},
		{0, errors.New("refused"), "error"},
		{0, context.Canceled, "error"},
		{0, fmt.Errorf("x: %w", context.DeadlineExceeded), "timeout"},
		{0, fmt.Errorf("x: %w", timeoutErr{}), "timeout"},
	} {
		if got := classNames[classOf(tc.status, tc.err)]; got != tc.want {
			t.Errorf("classOf(%d, %v) = %s, want %s", tc.status, tc.err, got, tc.want)
		}
	}
}
