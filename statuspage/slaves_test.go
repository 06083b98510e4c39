package statuspage

import (
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
)

func TestSlavesOf(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	lease := 5 * time.Second
	nodes := []cluster.NodeInfo{{ID: 3, Host: "b", Concurrency: 8}, {ID: 1, Host: "a", Concurrency: 4}}
	deadlines := map[int]time.Time{1: now.Add(4 * time.Second), 3: now.Add(2 * time.Second)}
	job := func(slaves map[string]client.SlaveCounts) Job {
		return NewJob(client.Status{Slaves: slaves})
	}
	jobs := []Job{
		job(map[string]client.SlaveCounts{"1": {Stored: 5, Failed: 1, Queued: 2, InFlight: 1}, "9": {Stored: 7}}),
		job(map[string]client.SlaveCounts{"1": {Stored: 1, InFlight: 3}, "6": {Queued: 4}, "9": {Stored: 1}}),
		job(map[string]client.SlaveCounts{"6": {Stored: 2}, "x": {Queued: 1}}),
	}
	got := slavesOf(nodes, nil, deadlines, lease, now, jobs)
	want := []Slave{
		// Heartbeat: deadline 4s ahead with a 5s lease: renewed 1s ago.
		{ID: 1, Live: true, Host: "a", Concurrency: 4, Capacity: 16, LastHeartbeat: now.Add(-time.Second), HeartbeatAgeMS: 1000,
			Stored: 6, Failed: 1, Queued: 2, InFlight: 4},
		{ID: 3, Live: true, Host: "b", Concurrency: 8, Capacity: 32, LastHeartbeat: now.Add(-3 * time.Second), HeartbeatAgeMS: 3000},
		// Not live, but work waits on it; its counters of every job add up.
		{ID: 6, Queued: 4, Stored: 2},
		// Slave 9 left with nothing queued: not shown.
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for i := range want {
		if !got[i].LastHeartbeat.Equal(want[i].LastHeartbeat) {
			t.Errorf("slave %d heartbeat %v, want %v", want[i].ID, got[i].LastHeartbeat, want[i].LastHeartbeat)
		}
		got[i].LastHeartbeat, want[i].LastHeartbeat = time.Time{}, time.Time{}
		if got[i] != want[i] {
			t.Errorf("slave %d:\n got %+v\nwant %+v", want[i].ID, got[i], want[i])
		}
	}
	if l := got[0].Load(); l != 0.25 {
		t.Errorf("slave 1 load %v, want 0.25 (4 held of 4 × 4)", l)
	}
	if l := (Slave{InFlight: 3}).Load(); l != 0 {
		t.Errorf("load without concurrency %v, want 0", l)
	}
	// A slave renews every third of its lease: two missed renewals mark it.
	for _, tc := range []struct {
		s    Slave
		want bool
	}{{Slave{Live: true, HeartbeatAgeMS: 4000}, false}, {Slave{Live: true, HeartbeatAgeMS: 4001}, true}, {Slave{}, true}} {
		if got := stale(tc.s, 6000); got != tc.want {
			t.Errorf("stale(%+v, 6s) = %v", tc.s, got)
		}
	}
}

func TestNewJob_Progress(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    client.Counters
		want Progress
	}{
		{"nothing discovered", client.Counters{}, Progress{}},
		{"half", client.Counters{Discovered: 10, Stored: 3, Failed: 1, Duplicates: 1},
			Progress{Done: 5, Total: 10, Percent: 50, Stored: 30, Failed: 10, Duplicates: 10}},
		// A counter ahead of discovered (counted between two reads) does not
		// overflow the bar.
		{"ahead", client.Counters{Discovered: 4, Stored: 5},
			Progress{Done: 5, Total: 4, Percent: 100, Stored: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewJob(client.Status{Counters: tc.c}).Progress; got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1\u2009000", 1234567: "1\u2009234\u2009567",
		-45000: "-45\u2009000"} {
		if got := formatInt(n); got != want {
			t.Errorf("formatInt(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{-time.Second: "0s", 59 * time.Second: "59s", 3 * time.Minute: "3m",
		2*time.Hour + 5*time.Minute: "2h5m", 50 * time.Hour: "2d"} {
		if got := formatAge(d); got != want {
			t.Errorf("formatAge(%v) = %q, want %q", d, got, want)
		}
	}
	for ms, want := range map[int64]string{350: "350ms", 1250: "1.2s", 125000: "2m"} {
		if got := formatMS(ms); got != want {
			t.Errorf("formatMS(%d) = %q, want %q", ms, got, want)
		}
	}
	now := time.Now()
	if got := agoText(now.Add(-90*time.Second).Format(time.RFC3339Nano), now); got != "1m ago" {
		t.Errorf("agoText: %q", got)
	}
	if got := agoText("soon", now); got != "soon" {
		t.Errorf("agoText of text that is no time: %q", got)
	}
}

// TestSlave_LoadIsHeldOfCapacity: a slave holds up to 4 × its concurrency
// tasks (fetching, or waiting for their host), and Redis records what it
// holds: the page shows that against the capacity, so a busy slave is at
// 100%, never at 400% of its concurrency, and never over 100%.
func TestSlave_LoadIsHeldOfCapacity(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	nodes := []cluster.NodeInfo{{ID: 0, Host: "a", Concurrency: 32}, {ID: 1, Host: "b", Concurrency: 32}}
	jobs := []Job{NewJob(client.Status{Slaves: map[string]client.SlaveCounts{"0": {InFlight: 128}, "1": {InFlight: 200}}})}
	got := slavesOf(nodes, nil, nil, time.Minute, now, jobs)
	if len(got) != 2 || got[0].Capacity != 128 || got[0].Load() != 1 {
		t.Fatalf("slave 0 holding 128 tasks at concurrency 32: %+v, load %v; want capacity 128, load 1", got, got[0].Load())
	}
	if l := got[1].Load(); l != 1 { // re-routed tasks can briefly exceed it
		t.Errorf("slave 1 holding 200 of 128: load %v, want 1", l)
	}
	var b strings.Builder
	if err := page.Execute(&b, pageData{Snap: &Snapshot{Time: now, Slaves: got}}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"Tasks held / capacity", `<span class="ptext">128 / 128</span>`, `width="100.00"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the slaves table lacks %s", want)
		}
	}
	for _, bad := range []string{"Load (in flight / concurrency)", "128 / 32", `width="400`} {
		if strings.Contains(html, bad) {
			t.Errorf("the slaves table shows %s", bad)
		}
	}
}
