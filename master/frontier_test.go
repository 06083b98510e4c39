package master

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/ledger"
)

// TestFrontier_seeds: a round's seeds are queued a batch per call (the
// state records how far), each once, and the round cannot finish before
// they all are.
func TestFrontier_seeds(t *testing.T) {
	f := newFixture(t)
	list := append(seeds(2*seedBatch+500), "https://example.com/list/7") // one repeat
	f.submit(t, list...)
	r := f.runner(t, 0)
	if started, err := r.frontier.startRound(f.ctx, 1); err != nil || !started {
		t.Fatalf("startRound = %v, %v", started, err)
	}
	left, err := r.frontier.seed(f.ctx, 1)
	if err != nil || left != int64(len(list)-seedBatch) {
		t.Fatalf("first batch: left %d, %v; want %d", left, err, len(list)-seedBatch)
	}
	if outcome, _ := r.frontier.tryFinish(f.ctx, time.Time{}); outcome != ledger.RoundRunning {
		t.Fatal("the round finished with seeds not yet queued")
	}
	if err := r.seed(f.ctx, 1); err != nil {
		t.Fatalf("seed: %v", err)
	}
	if n := f.rdb.LLen(f.ctx, f.jk.Frontier()).Val(); n != int64(len(list)-1) {
		t.Errorf("frontier holds %d pages, want %d (the repeated seed once)", n, len(list)-1)
	}
	if got := f.rdb.HGet(f.ctx, f.jk.State(), cluster.StateSeeded).Val(); got != "2501" {
		t.Errorf("seeded = %s, want 2501", got)
	}
	if spec := f.rdb.Get(f.ctx, f.jk.Spec()).Val(); len(spec) > 4096 {
		t.Errorf("the stored spec is %d bytes: the seeds must live apart from it", len(spec))
	}
}

// TestFrontier_commit: committing a list page twice (a master that died
// after its first commit, a page fetched again) counts it once and queues
// its next pages once.
func TestFrontier_commit(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0)
	if _, err := r.frontier.startRound(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.seed(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	taken, err := r.lists.Take(f.ctx, 1, time.Minute)
	if err != nil || len(taken) != 1 {
		t.Fatalf("take: %v %v", taken, err)
	}
	next := []pageRef{{fp: "fp-next", page: cluster.ListPage{URL: "https://example.com/list/1", Depth: 1}}}
	for i := 0; i < 2; i++ {
		if err := r.frontier.commit(f.ctx, 1, taken[0].Entry, map[string]int64{cluster.StatListPages: 1, cluster.StatOffsite: 2}, next); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	stats := f.rdb.HGetAll(f.ctx, f.jk.Stats()).Val()
	if want := map[string]string{"list_pages": "1", "offsite": "2"}; !reflect.DeepEqual(stats, want) {
		t.Errorf("stats = %v, want %v", stats, want)
	}
	if got := f.rdb.LRange(f.ctx, f.jk.Frontier(), 0, -1).Val(); !reflect.DeepEqual(got, []string{next[0].page.Encode()}) {
		t.Errorf("frontier = %q, want the next page once", got)
	}
	if n := f.rdb.HLen(f.ctx, f.jk.ListAttempts()).Val(); n != 0 {
		t.Errorf("%d attempt fields left after the commit", n)
	}
}

// TestFrontier_tryFinish: a round ends only when no list page waits or is
// in progress and no slave has a task queued or in flight; then it is
// finished with the next round's time.
func TestFrontier_tryFinish(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0)
	if _, err := r.frontier.startRound(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.seed(f.ctx, 1); err != nil {
		t.Fatal(err)
	}
	finish := func() bool {
		t.Helper()
		outcome, err := r.frontier.tryFinish(f.ctx, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return outcome == ledger.RoundFinished
	}
	if finish() {
		t.Fatal("finished with a list page waiting")
	}
	f.rdb.Del(f.ctx, f.jk.Frontier())
	f.rdb.RPush(f.ctx, f.jk.Queue(9), task("a"))
	if finish() {
		t.Fatal("finished with a task queued on slave 9")
	}
	f.rdb.Del(f.ctx, f.jk.Queue(9))
	f.rdb.ZAdd(f.ctx, f.jk.Inflight(3), redisZ(task("b")))
	if finish() {
		t.Fatal("finished with a task in flight on slave 3")
	}
	f.rdb.Del(f.ctx, f.jk.Inflight(3))
	if !finish() {
		t.Fatal("not finished with nothing left")
	}
	if state := f.rdb.HGet(f.ctx, f.jk.State(), cluster.StateField).Val(); state != cluster.StateFinished {
		t.Errorf("state = %s, want finished", state)
	}
}

// TestFrontier_fenced: a master whose fencing token is stale changes
// nothing and learns it with errFenced.
func TestFrontier_fenced(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0)
	f.rdb.Incr(f.ctx, f.jk.Fence()) // another master took over
	_, err := r.frontier.startRound(f.ctx, 1)
	if !errors.Is(err, errFenced) {
		t.Fatalf("startRound with a stale fence = %v, want errFenced", err)
	}
	if state := f.rdb.HGet(f.ctx, f.jk.State(), cluster.StateField).Val(); state != cluster.StatePending {
		t.Errorf("state = %s, want it untouched (pending)", state)
	}
}

// TestFrontier_stateGone: when the job's state is gone from Redis (it
// restarted empty), the master says so rather than blaming another master,
// and stops acting on the job as when fenced.
func TestFrontier_stateGone(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0)
	f.rdb.Del(f.ctx, f.jk.Fence(), f.jk.State()) // Redis restarted empty
	_, err := r.frontier.startRound(f.ctx, 1)
	if !errors.Is(err, errFenced) || !errors.Is(err, errJobGone) || !strings.Contains(err.Error(), "state is gone") {
		t.Fatalf("startRound with the job's state gone = %v, want errJobGone (which stops the job as errFenced does)", err)
	}
}

// TestFrontier_nextRound: starting a round already started changes
// nothing; once a round is finished the next one starts over: round 1's
// seen list pages are forgotten and its seeds are queued again.
func TestFrontier_nextRound(t *testing.T) {
	f := newFixture(t)
	f.submit(t, seeds(3)...)
	r := f.runner(t, 0)
	f.startRound(t, r)
	if started, err := r.frontier.startRound(f.ctx, 1); err != nil || started {
		t.Fatalf("starting round 1 again = %v, %v; want false", started, err)
	}
	if n := f.rdb.LLen(f.ctx, f.jk.Frontier()).Val(); n != 3 {
		t.Fatalf("frontier holds %d pages after a repeated start, want the 3 seeds", n)
	}
	if f.rdb.Exists(f.ctx, f.jk.ListSeen(1)).Val() != 1 {
		t.Fatal("round 1 keeps no seen list pages: the test proves nothing")
	}
	f.rdb.Del(f.ctx, f.jk.Frontier()) // the round's pages are done
	if outcome, err := r.frontier.tryFinish(f.ctx, time.Time{}); err != nil || outcome != ledger.RoundFinished {
		t.Fatalf("tryFinish = %d, %v; want finished", outcome, err)
	}
	if started, err := r.frontier.startRound(f.ctx, 2); err != nil || !started {
		t.Fatalf("startRound(2) = %v, %v", started, err)
	}
	if err := r.seed(f.ctx, 2); err != nil {
		t.Fatal(err)
	}
	if n := f.rdb.LLen(f.ctx, f.jk.Frontier()).Val(); n != 3 {
		t.Errorf("round 2's frontier holds %d pages, want the 3 seeds again", n)
	}
	if f.rdb.Exists(f.ctx, f.jk.ListSeen(1)).Val() != 0 {
		t.Error("round 1's seen list pages outlive it")
	}
	s, err := r.frontier.state(f.ctx)
	if err != nil || s.state != cluster.StateRunning || s.round != 2 {
		t.Errorf("state %+v, %v; want running round 2", s, err)
	}
}
