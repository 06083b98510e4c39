package slave

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/statuspage/feed"
)

// TestSlave_load: the load a slave publishes for the status page counts
// its held tasks by host, most first and then by name, at most
// feed.MaxHosts of them, each with its origin; a task nobody can decode
// is left out.
func TestSlave_load(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runningJob(t, ctx, rdb, keys, "load", "http://127.0.0.1:1")
	s, j := idleSlave(t, ctx, rdb, keys, "load", jsonlStore(t))
	held := map[string]int{"https://b.test": 3, "http://a.test:8080": 3, "https://c.test": 5}
	for i := 0; i < feed.MaxHosts; i++ {
		held[fmt.Sprintf("https://z%d.test", i)] = 1
	}
	for origin, n := range held {
		for i := 0; i < n; i++ {
			s.held.add(j, taskFor("load", fmt.Sprintf("%s/p/%d", origin, i)), time.Time{})
		}
	}
	s.held.add(j, "{not a task", time.Time{})
	load := s.load()
	if load.Capacity != s.capacity() || load.Concurrency != s.opts.Concurrency {
		t.Errorf("load %+v, want capacity %d, concurrency %d", load, s.capacity(), s.opts.Concurrency)
	}
	want := []feed.HostLoad{{Host: "c.test", Origin: "https://c.test", Held: 5}, {Host: "a.test", Origin: "http://a.test:8080", Held: 3},
		{Host: "b.test", Origin: "https://b.test", Held: 3}}
	for i := 0; i < feed.MaxHosts-3; i++ {
		want = append(want, feed.HostLoad{Host: fmt.Sprintf("z%d.test", i), Origin: fmt.Sprintf("https://z%d.test", i), Held: 1})
	}
	if fmt.Sprint(load.Hosts) != fmt.Sprint(want) {
		t.Errorf("hosts\n %v\nwant\n %v", load.Hosts, want)
	}
}
