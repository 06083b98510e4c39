package master

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/url"
	"testing"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
)

// TestRebalance_slaveJoins (issue 17): a slave that joins (or rejoins
// after a partition) while others hold a backlog gets its fair share of
// what is still queued, not only of what is discovered from then on;
// tasks in flight stay with their holders, and nothing is lost or doubled.
// A job routed by host moves whole hosts: each host's tasks stay together.
func TestRebalance_slaveJoins(t *testing.T) {
	for _, routing := range []string{jobspec.RoutingURL, jobspec.RoutingHost} {
		t.Run(routing, func(t *testing.T) { testRebalanceSlaveJoins(t, routing) })
	}
}

func testRebalanceSlaveJoins(t *testing.T, routing string) {
	f := newFixture(t)
	f.submitSpec(t, func(s *jobspec.Job) { s.Routing = routing }, "https://example.com/list/1")
	r := f.runner(t, 0)
	const n, hosts = 400, 40
	var tasks []any
	for i := 0; i < n; i++ {
		sum := sha1.Sum([]byte(fmt.Sprint(i)))
		u := fmt.Sprintf("https://h%d.example.com/d/%d", i%hosts, i)
		tasks = append(tasks, cluster.Task{URL: u, FP: hex.EncodeToString(sum[:]), Job: "news"}.Encode())
	}
	f.rdb.RPush(f.ctx, f.jk.Queue(0), tasks...)
	held := tasks[0].(string)
	f.rdb.LRem(f.ctx, f.jk.Queue(0), 1, held)
	f.rdb.ZAdd(f.ctx, f.jk.Inflight(0), redisZ(held))
	r.reclaim(f.ctx) // slave 0 alone: nothing moves

	f.m.useTable(assign.Table{Version: 2, Nodes: []assign.Node{{ID: 0, Weight: 32}, {ID: 1, Weight: 32}}})
	r.reclaim(f.ctx)
	q0 := f.rdb.LLen(f.ctx, f.jk.Queue(0)).Val()
	q1 := f.rdb.LLen(f.ctx, f.jk.Queue(1)).Val()
	if q0+q1 != n-1 || f.rdb.ZScore(f.ctx, f.jk.Inflight(0), held).Err() != nil {
		t.Fatalf("queued %d + %d, want %d, and the task in flight still held by slave 0", q0, q1, n-1)
	}
	if q1 < n/4 {
		t.Errorf("the slave that joined got %d of %d queued tasks, want about half", q1, n-1)
	}
	routes := f.m.liveRoutes()
	hostOn := map[string]int{}
	for slave, q := range map[int]string{0: f.jk.Queue(0), 1: f.jk.Queue(1)} {
		for _, raw := range f.rdb.LRange(f.ctx, q, 0, -1).Val() {
			_, key := r.taskRouteKey(raw)
			if to, _ := routes.Route(key); to != slave {
				t.Errorf("task %s queued for slave %d, routed to %d", raw, slave, to)
				break
			}
			host := taskHost(t, raw)
			if on, ok := hostOn[host]; ok && on != slave {
				hostOn[host] = -1 // on both
			} else if !ok {
				hostOn[host] = slave
			}
		}
	}
	split := 0
	for _, on := range hostOn {
		if on == -1 {
			split++
		}
	}
	if routing == jobspec.RoutingHost && split > 0 {
		t.Errorf("%d of %d hosts have tasks on both slaves; routed by host, each should be on one", split, len(hostOn))
	}
	if routing == jobspec.RoutingURL && split < hosts/2 {
		t.Errorf("only %d of %d hosts have tasks on both slaves; routed by URL, most should", split, len(hostOn))
	}
}

// taskHost is the host of a task's URL.
func taskHost(t *testing.T, raw string) string {
	t.Helper()
	task, err := cluster.DecodeTask(raw)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(task.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
