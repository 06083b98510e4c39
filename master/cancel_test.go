package master

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/queue"
)

// TestJobRunner_cancel (issue 9, defect 3): a cancelled job drops its
// queued tasks at once, and those in flight whose slave stopped renewing
// them once their lease lapses, all counted as cancelled; it is finished
// only once its slaves have acknowledged the tasks they still hold, and
// then discovered = stored + failed + skipped + duplicates + cancelled
// holds exactly, with no late acknowledgement counted after.
func TestJobRunner_cancel(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0, 1)
	if _, err := r.frontier.startRound(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.rdb.RPush(f.ctx, f.jk.Queue(0), task("h"), task("a"), task("b"), task("c"))
	f.rdb.RPush(f.ctx, f.jk.Queue(1), task("e"), task("f"), task("d"))
	f.rdb.HSet(f.ctx, f.jk.Stats(), cluster.StatRouted, 7, cluster.StatDuplicates, 2)
	dead, live := r.queues.Slave(0), r.queues.Slave(1)
	lapsing := takeTasks(t, f, dead, 1, time.Minute)
	held := takeTasks(t, f, live, 2, time.Minute)

	if _, err := f.jobs(t).Cancel(f.ctx, "news"); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- r.cancel(f.ctx) }()
	cancelled := func(n string) func() bool {
		return func() bool { return f.rdb.HGet(f.ctx, f.jk.Stats(), cluster.StatCancelled).Val() == n }
	}
	testenv.Eventually(t, 10*time.Second, "the 4 queued tasks are dropped", cancelled("4"))
	if st := status(t, f); st.State == cluster.StateFinished || !st.Cancelling || st.Counters.InFlight != 3 {
		t.Fatalf("with 3 tasks in flight: state %s, cancelling %v, in flight %d; want still running, cancelling, 3",
			st.State, st.Cancelling, st.Counters.InFlight)
	}
	f.rdb.ZAddXX(f.ctx, f.jk.Inflight(0), redis.Z{Score: 1, Member: lapsing[0]}) // its slave died: the lease lapsed
	testenv.Eventually(t, 10*time.Second, "the task whose lease lapsed is dropped", cancelled("5"))
	if st := status(t, f); st.State == cluster.StateFinished || st.Counters.InFlight != 2 {
		t.Fatalf("with 2 tasks in flight: state %s, in flight %d; want still running, 2", st.State, st.Counters.InFlight)
	}
	if n, err := ledger.New(f.rdb, f.jk).Ack(f.ctx, 0, []ledger.Outcome{{Task: lapsing[0]}}); err != nil || n != 0 {
		t.Errorf("late ack of a dropped task counted %d (%v), want 0: it is counted cancelled", n, err)
	}
	if n, err := ledger.New(f.rdb, f.jk).Ack(f.ctx, 1, []ledger.Outcome{{Task: held[0]}, {Task: held[1], Failed: true}}); err != nil || n != 2 {
		t.Fatalf("ack of the tasks held = %d, %v; want 2", n, err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("cancel = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the job was not finished once nothing was in flight")
	}
	st := status(t, f)
	c := st.Counters
	if st.State != cluster.StateFinished || st.Cancelling || st.CancelledAt == "" || c.Queued+c.InFlight != 0 {
		t.Errorf("state %s, cancelling %v, cancelled at %q, %d queued, %d in flight; want finished, cancelled, none left",
			st.State, st.Cancelling, st.CancelledAt, c.Queued, c.InFlight)
	}
	if c.Stored != 1 || c.Failed != 1 || c.Cancelled != 5 || c.Discovered != c.Settled() {
		t.Errorf("counters %+v: want stored 1, failed 1, cancelled 5, and discovered %d = settled %d",
			c, c.Discovered, c.Settled())
	}
	if n, _ := ledger.New(f.rdb, f.jk).Ack(f.ctx, 1, []ledger.Outcome{{Task: held[0]}}); n != 0 {
		t.Errorf("an acknowledgement after the finish counted %d", n)
	}
}

// takeTasks takes n tasks of a slave's queue under lease.
func takeTasks(t *testing.T, f *fixture, q *queue.SlaveQueue, n int, lease time.Duration) []string {
	t.Helper()
	ds, err := q.Take(f.ctx, n, lease)
	if err != nil || len(ds) != n {
		t.Fatalf("take %d: %+v, %v", n, ds, err)
	}
	return queue.Entries(ds)
}

// status reads the job's status as client status does.
func status(t *testing.T, f *fixture) *client.Status {
	t.Helper()
	st, err := f.jobs(t).Status(f.ctx, "news")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestJobRunner_cancelRetried: tasks that client retry-failed re-enqueued
// are counted failed already; cancel drops them, queued or in flight with
// a lapsed lease, without counting them cancelled too. The links slaves
// found that no master will route any more are dropped.
func TestJobRunner_cancelRetried(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0, 1)
	if _, err := r.frontier.startRound(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	retried := func(path string) string {
		return cluster.Task{URL: "https://example.com/" + path, FP: strings.Repeat("cd", 20), Job: "news", Retry: true}.Encode()
	}
	f.rdb.SAdd(f.ctx, f.jk.Retrying(), strings.Repeat("cd", 20))
	f.rdb.RPush(f.ctx, f.jk.Queue(0), task("a"), retried("r1"), retried("r2"))
	f.rdb.HSet(f.ctx, f.jk.Stats(), cluster.StatRouted, 1, cluster.StatFailed, 2)
	lapsing := takeTasks(t, f, r.queues.Slave(0), 2, time.Minute) // task a and r1
	for _, task := range lapsing {
		f.rdb.ZAddXX(f.ctx, f.jk.Inflight(0), redis.Z{Score: 1, Member: task}) // their slave died
	}
	f.rdb.RPush(f.ctx, f.jk.Found(), cluster.FoundLinks{Page: "https://example.com/a", Kind: jobspec.KindDetail}.Encode())
	if _, err := f.jobs(t).Cancel(f.ctx, "news"); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if err := r.cancel(f.ctx); err != nil {
		t.Fatalf("cancel = %v", err)
	}
	if n := f.rdb.Exists(f.ctx, f.jk.Found(), f.jk.FoundActive()).Val(); n != 0 {
		t.Errorf("the cancelled job's found links are kept (%d keys)", n)
	}
	st := status(t, f)
	if c := st.Counters; st.State != cluster.StateFinished || c.Cancelled != 1 || c.Failed != 2 {
		t.Errorf("state %s, cancelled %d, failed %d; want finished, 1 cancelled (task a), the 2 retried still failed",
			st.State, c.Cancelled, c.Failed)
	}
}
