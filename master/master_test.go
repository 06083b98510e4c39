package master

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/queue"
)

// TestMaster_fencing (issue 8, defect 7): a master restarted with the same
// --id while its old lease lives does not get the old fencing token: it
// waits for the lease, then gets a larger one, and the old process can no
// longer renew.
func TestMaster_fencing(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	acquire := func(m *Master, lease time.Duration) int64 {
		t.Helper()
		n, err := acquireScript.Run(f.ctx, f.rdb, []string{f.jk.Owner(), f.jk.Fence()}, m.token, lease.Milliseconds()).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	old := f.m
	first := acquire(old, 300*time.Millisecond)
	restarted, err := New(old.opts, old.deps) // same ID, new process
	if err != nil {
		t.Fatal(err)
	}
	if got := acquire(restarted, time.Minute); got != -1 {
		t.Fatalf("the restarted master acquired the live lease with fence %d; want it refused", got)
	}
	var second int64
	testenv.Eventually(t, 5*time.Second, "the old lease lapses and the restarted master acquires the job", func() bool {
		second = acquire(restarted, time.Minute)
		return second != -1
	})
	if second <= first {
		t.Fatalf("new owner's fence %d, want larger than the old %d", second, first)
	}
	ok, err := renewScript.Run(f.ctx, f.rdb, []string{f.jk.Owner()}, old.token, 10000).Bool()
	if err != nil || ok {
		t.Errorf("the old process renewed the new owner's lease: %v %v", ok, err)
	}
	if name, _, _ := strings.Cut(f.rdb.Get(f.ctx, f.jk.Owner()).Val(), "/"); name != "test-master" {
		t.Errorf("the owner's name is %q, want the --id", name)
	}
}

// TestJobRunner_rerouteDead (issue 8, defect 6): a dead slave's queue that
// holds an undecodable task moves entirely to the live slaves.
func TestJobRunner_rerouteDead(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0, 1)
	f.rdb.RPush(f.ctx, f.jk.Queue(5), task("a"), "{not a task", task("b"))
	f.rdb.ZAdd(f.ctx, f.jk.Inflight(5), redisZ(task("c")))
	depth, err := r.queues.Depth(f.ctx, r.m.opts.MaxSlaves)
	if err != nil {
		t.Fatal(err)
	}
	r.rerouteDead(f.ctx, depth)
	after, _ := r.queues.Depth(f.ctx, r.m.opts.MaxSlaves)
	if after.Queued[5]+after.Inflight[5] != 0 {
		t.Errorf("dead slave 5 still holds %d queued, %d in flight", after.Queued[5], after.Inflight[5])
	}
	if after.Queued[0]+after.Queued[1] != 4 {
		t.Errorf("live slaves hold %d tasks, want all 4", after.Queued[0]+after.Queued[1])
	}
}

// TestJobRunner_releaseOrphanPages: a list page in progress that none of
// this runner's workers holds (its master died) goes back to the frontier
// at once; one a worker holds stays.
func TestJobRunner_releaseOrphanPages(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0", "https://example.com/list/1")
	r := f.runner(t, 0)
	if _, err := r.frontier.startRound(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.seed(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	taken, err := r.lists.Take(f.ctx, 2, 3*time.Second) // a short lease: expiring soon
	if err != nil || len(taken) != 2 {
		t.Fatalf("take: %v %v", taken, err)
	}
	done := r.working(taken[1].Entry)
	defer done()
	r.releaseOrphanPages(f.ctx)
	if got := f.rdb.LRange(f.ctx, f.jk.Frontier(), 0, -1).Val(); len(got) != 1 || got[0] != taken[0].Entry {
		t.Errorf("frontier = %q, want only the orphan %q back", got, taken[0].Entry)
	}
}

// TestJobRunner_releaseOrphanFound: Found entries in progress that this
// runner's drain is not routing (taken by a master that died) go back at
// once, not after their lease of ListLease; those the drain holds stay.
func TestJobRunner_releaseOrphanFound(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0)
	for _, p := range []string{"/a", "/b"} {
		f.rdb.RPush(f.ctx, f.jk.Found(), cluster.FoundLinks{Page: "https://example.com" + p, Kind: jobspec.KindDetail, Round: 1}.Encode())
	}
	taken, err := r.found.Take(f.ctx, 2, 3*time.Second) // as the dead master took them, a lease ago
	if err != nil || len(taken) != 2 {
		t.Fatalf("take: %v %v", taken, err)
	}
	done := r.holdingFound(taken[1:])
	defer done()
	r.releaseOrphanFound(f.ctx)
	if got := f.rdb.LRange(f.ctx, f.jk.Found(), 0, -1).Val(); len(got) != 1 || got[0] != taken[0].Entry {
		t.Errorf("found list = %q, want only the orphan %q back", got, taken[0].Entry)
	}
	if n := f.rdb.ZCard(f.ctx, f.jk.FoundActive()).Val(); n != 1 {
		t.Errorf("%d found entries in progress, want the one the drain holds", n)
	}
}

// TestJobRunner_deadLetterList: a list page delivered more than
// MaxDeliveries times without a commit is recorded as failed with the
// reason its last holder noted, and leaves the frontier, so the round can
// finish.
func TestJobRunner_deadLetterList(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "http://127.0.0.1:1/never")
	r := f.runner(t, 0)
	if _, err := r.frontier.startRound(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.seed(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	var last queue.Delivery
	for i := 0; i <= r.m.opts.MaxDeliveries; i++ {
		ds, err := r.lists.Take(f.ctx, 1, time.Minute)
		if err != nil || len(ds) != 1 {
			t.Fatalf("take %d: %v %v", i, ds, err)
		}
		last = ds[0]
		if _, err := r.lists.Note(f.ctx, last.Entry, "admit detail links: redis: OOM"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.lists.Requeue(f.ctx, []string{last.Entry}); err != nil { // as an orphan release does
			t.Fatal(err)
		}
	}
	ds, err := r.lists.Take(f.ctx, 1, time.Minute)
	if err != nil || len(ds) != 1 || ds[0].Count <= r.m.opts.MaxDeliveries {
		t.Fatalf("take: %+v %v; want a delivery past the limit", ds, err)
	}
	r.startList(f.ctx, 1, ds[0])
	testenv.Eventually(t, 10*time.Second, "the page is recorded as failed", func() bool {
		return f.rdb.HGet(f.ctx, f.jk.Stats(), cluster.StatListFailed).Val() == "1"
	})
	if n := f.rdb.LLen(f.ctx, f.jk.Frontier()).Val() + f.rdb.ZCard(f.ctx, f.jk.FrontierActive()).Val(); n != 0 {
		t.Errorf("the page is still on the frontier (%d)", n)
	}
	if got := f.rdb.HGet(f.ctx, f.jk.Stats(), cluster.StatListFailed).Val(); got != "1" {
		t.Errorf("list_failed = %q, want 1", got)
	}
	_ = f.failures.Close()
	data, _ := os.ReadFile(f.failPath)
	if !strings.Contains(string(data), "admit detail links: redis: OOM") || !strings.Contains(string(data), "deliveries") {
		t.Errorf("failure record %q does not give the reason", firstLine(data))
	}
}

func firstLine(b []byte) string {
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Scan()
	return sc.Text()
}

// TestJobRunner_readDepth: a job's first reclaim reads every slave slot's
// queue, and finds a dead slave's tasks; the next ticks read only the live
// slaves' queues and those that held tasks (two LLENs and a dead one's,
// not 64); a queue outside both is read again at the next full read, every
// fullDepthEvery ticks.
func TestJobRunner_readDepth(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0, 1)
	f.rdb.RPush(f.ctx, f.jk.Queue(5), task("a"))
	llens := testenv.CountCommands(f.rdb, func(name string, _ []any) bool { return name == "llen" })
	d, err := r.readDepth(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Queued[5] != 1 {
		t.Fatalf("the first read found %d tasks on dead slave 5, want 1", d.Queued[5])
	}
	if n := llens.Swap(0); n != int64(r.m.opts.MaxSlaves)+1 {
		t.Errorf("the first read sent %d LLENs, want every slot's and the render wait list's (%d)", n, r.m.opts.MaxSlaves+1)
	}
	f.rdb.RPush(f.ctx, f.jk.Queue(9), task("b")) // outside the protocol: slave 9 was never live
	for tick := 1; tick < fullDepthEvery; tick++ {
		d, err := r.readDepth(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := llens.Swap(0); n != 4 {
			t.Fatalf("tick %d sent %d LLENs, want 4 (slaves 0, 1 and 5, and the render wait list)", tick, n)
		}
		if d.Queued[5] != 1 || d.Queued[9] != 0 {
			t.Fatalf("tick %d read slave 5: %d, slave 9: %d; want 1 and unread", tick, d.Queued[5], d.Queued[9])
		}
	}
	d, err = r.readDepth(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Queued[9] != 1 {
		t.Errorf("the full read at tick %d found %d tasks on slave 9, want 1", fullDepthEvery, d.Queued[9])
	}
}
