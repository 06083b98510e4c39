package master

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/cluster"
)

// TestRebalance_slaveJoins (issue 17): a slave that joins (or rejoins
// after a partition) while others hold a backlog gets its fair share of
// what is still queued, not only of what is discovered from then on;
// tasks in flight stay with their holders, and nothing is lost or doubled.
func TestRebalance_slaveJoins(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/1")
	r := f.runner(t, 0)
	const n = 400
	var tasks []any
	for i := 0; i < n; i++ {
		sum := sha1.Sum([]byte(fmt.Sprint(i)))
		tasks = append(tasks, cluster.Task{URL: fmt.Sprintf("https://example.com/d/%d", i), FP: hex.EncodeToString(sum[:]), Job: "news"}.Encode())
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
	for slave, q := range map[int]string{0: f.jk.Queue(0), 1: f.jk.Queue(1)} {
		for _, raw := range f.rdb.LRange(f.ctx, q, 0, -1).Val() {
			_, key := routingKey(raw)
			if to, _ := routes.Route(key); to != slave {
				t.Errorf("task %s queued for slave %d, routed to %d", raw, slave, to)
				break
			}
		}
	}
}
