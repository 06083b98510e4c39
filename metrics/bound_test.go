package metrics

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFetch_hostBound checks that the first Options.Hosts hosts keep a host
// label, every later one (and a bad one) counts under "other", and the
// series stay bounded however many hosts are seen.
func TestFetch_hostBound(t *testing.T) {
	opts := DefaultOptions()
	opts.Hosts = 2
	r := newRegistry(t, opts)
	n := r.Node(RoleSlave, 0)
	for _, h := range []string{"a.example", "B.example", "c.example", "a.example", "", "d.example", "b.example", "other", "\xff"} {
		n.Fetch().Observe(h, 200, 1, time.Millisecond, nil)
	}
	for i := range 10_000 {
		n.Fetch().Observe(fmt.Sprintf("h%d.example", i), 404, 1, time.Millisecond, nil)
		n.Politeness().Waited(fmt.Sprintf("h%d.example", i), time.Millisecond, "rate")
	}
	n.Robots().Disallowed("c.example")
	n.Robots().Disallowed("b.example")
	n.Politeness().Waited("a.example", time.Second, "rate")

	m := gather(t, r)
	at := func(more ...string) []string { return append([]string{"role=slave", "slave=0"}, more...) }
	m.expect(t, 2, "crawler_fetch_pages_total", at("host=a.example", "status=2xx")...)
	m.expect(t, 2, "crawler_fetch_pages_total", at("host=b.example", "status=2xx")...)
	m.expect(t, 5, "crawler_fetch_pages_total", at("host=other", "status=2xx")...)
	m.expect(t, 10_000, "crawler_fetch_pages_total", at("host=other", "status=4xx")...)
	m.expect(t, 1, "crawler_robots_disallowed_total", at("host=other")...)
	m.expect(t, 1, "crawler_robots_disallowed_total", at("host=b.example")...)
	m.expect(t, 1, "crawler_politeness_waits_total", at("host=a.example", "reason=rate")...)
	m.expect(t, 10_000, "crawler_politeness_waits_total", at("host=other", "reason=rate")...)
	for name, most := range map[string]int{"crawler_fetch_pages_total": 3 * nClasses, "crawler_fetch_bytes_total": 3,
		"crawler_politeness_waits_total": 3 * maxReasons} {
		if c := m.count(name); c > most {
			t.Errorf("%s has %d series, want at most %d", name, c, most)
		}
	}
}

// TestFetch_noHostLabels checks that Hosts 0 counts every host as "other".
func TestFetch_noHostLabels(t *testing.T) {
	opts := DefaultOptions()
	opts.Hosts = 0
	r := newRegistry(t, opts)
	r.Node(RoleMaster, 0).Fetch().Observe("a.example", 200, 1, time.Millisecond, nil)
	r.Node(RoleMaster, 0).Fetch().Observe("b.example", 200, 1, time.Millisecond, nil)
	m := gather(t, r)
	m.expect(t, 2, "crawler_fetch_pages_total", "role=master", "slave=", "host=other", "status=2xx")
	if c := m.count("crawler_fetch_pages_total"); c != 1 {
		t.Errorf("%d page series, want 1:\n%s", c, m.dump("crawler_fetch_pages_total"))
	}
}

// TestNode_callerLabelBounds checks the bounds on labels callers name:
// failure kinds, reasons and jobs.
func TestNode_callerLabelBounds(t *testing.T) {
	opts := DefaultOptions()
	opts.Jobs = 3
	r := newRegistry(t, opts)
	n := r.Node(RoleMaster, 0)
	for i := range 100 {
		n.Failed(fmt.Sprintf("kind%d", i))
		n.Politeness().Waited("a.example", time.Second, fmt.Sprintf("reason%d", i))
		n.Dedup().Admitted(fmt.Sprintf("job%d", i), 1, 1)
	}
	m := gather(t, r)
	mk := []string{"role=master", "slave="}
	m.expect(t, 100-maxKinds, "crawler_failures_total", append(mk, "kind=other")...)
	m.expect(t, 100-maxReasons, "crawler_politeness_wait_seconds", append(mk, "reason=other")...)
	m.expect(t, 97, "crawler_dedup_urls_total", append(mk, "job=other", "result=new")...)
	m.expect(t, 1, "crawler_dedup_urls_total", append(mk, "job=job2", "result=duplicate")...)
	if c := m.count("crawler_failures_total"); c != maxKinds+1 {
		t.Errorf("%d failure series, want %d", c, maxKinds+1)
	}
}

// TestLabelSet_concurrent checks that goroutines racing to admit values
// admit exactly max of them, and that each value always gets one answer.
func TestLabelSet_concurrent(t *testing.T) {
	s := newLabelSet(50)
	var wg sync.WaitGroup
	got := make([]map[string]string, 8)
	for g := range got {
		got[g] = make(map[string]string)
		wg.Go(func() {
			for i := range 500 {
				v := fmt.Sprintf("v%d", (i*7+g*13)%200)
				got[g][v] = s.label(v)
			}
		})
	}
	wg.Wait()
	admitted := make(map[string]bool)
	for _, m := range got {
		for v, l := range m {
			if l != v && l != Other {
				t.Fatalf("label(%q) = %q", v, l)
			}
			if l == v {
				admitted[v] = true
			}
		}
	}
	for _, m := range got {
		for v, l := range m {
			if admitted[v] != (l == v) {
				t.Errorf("%q admitted by one goroutine and folded by another", v)
			}
		}
	}
	if len(admitted) != 50 {
		t.Errorf("%d values admitted, want 50", len(admitted))
	}
	if l := s.label(strings.Repeat("x", maxLabelLen+1)); l != Other {
		t.Errorf("an overlong value got label %q", l)
	}
}
