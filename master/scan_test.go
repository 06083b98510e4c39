package master

import (
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/jobspec"
)

// TestMaster_jobsIdle: a master leaves alone the jobs with nothing to do
// (finished with no round scheduled, or indexed by a submission that has
// not written them yet) and takes the others, a recurring job whose next
// round is scheduled among them.
func TestMaster_jobsIdle(t *testing.T) {
	f := newFixture(t)
	states := map[string][]any{
		"pending":   {cluster.StateField, cluster.StatePending},
		"running":   {cluster.StateField, cluster.StateRunning},
		"finished":  {cluster.StateField, cluster.StateFinished},
		"recurring": {cluster.StateField, cluster.StateFinished, cluster.StateNextRoundAt, "2030-01-01T00:00:00Z"},
		"unwritten": nil,
	}
	want := map[string]bool{"pending": false, "running": false, "finished": true, "recurring": false, "unwritten": true}
	var names []string
	for name, fields := range states {
		if fields != nil {
			f.rdb.HSet(f.ctx, f.keys.Job(name).State(), fields...)
		}
		names = append(names, name)
	}
	idle, err := f.m.jobsIdle(f.ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		if idle[i] != want[name] {
			t.Errorf("job %s: idle %v, want %v", name, idle[i], want[name])
		}
	}
}

// TestMaster_scanDue: a master that owns no job scans the jobs when their
// version moves (a submission, a round started or finished), not on every
// tick; one that owns a job scans every tick, to renew its lease.
func TestMaster_scanDue(t *testing.T) {
	f := newFixture(t)
	if !f.m.scanDue(f.ctx) {
		t.Fatal("the first scan is not due")
	}
	if f.m.scanDue(f.ctx) {
		t.Error("an idle master scans again with nothing changed")
	}
	f.rdb.Incr(f.ctx, f.keys.JobsVersion())
	if !f.m.scanDue(f.ctx) {
		t.Error("an idle master does not scan when the jobs' version moved")
	}
	if f.m.scanDue(f.ctx) {
		t.Error("an idle master scans twice for one change")
	}
	f.m.jobs["news"] = &ownedJob{}
	if !f.m.scanDue(f.ctx) {
		t.Error("a master that owns a job skips a scan: its lease would lapse")
	}
}

// TestJobRunner_wakesSlaves: a slave whose queue was empty is told of its
// new tasks on its tasks channel, so an idle one takes them at once; one
// whose queue holds tasks is not told again.
func TestJobRunner_wakesSlaves(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 3)
	sub := f.rdb.Subscribe(f.ctx, f.keys.TasksChannel(3))
	defer sub.Close()
	if _, err := sub.Receive(f.ctx); err != nil { // the subscription is live
		t.Fatal(err)
	}
	c, slave, err := r.candidate(f.m.liveRoutes(), 1, "", extract.Link{URL: "https://example.com/p/1", Kind: jobspec.KindDetail})
	if err != nil || slave != 3 {
		t.Fatalf("candidate: slave %d, %v; want 3, the only one live", slave, err)
	}
	if err := r.admit(f.ctx, 1, "page", "", []dedup.Candidate{c}, []int{slave}); err != nil {
		t.Fatal(err)
	}
	select {
	case msg := <-sub.Channel():
		if msg.Channel != f.keys.TasksChannel(3) {
			t.Errorf("told on %s", msg.Channel)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("slave 3 was not told of its new task")
	}
	// Its queue holds that task now: the next one is taken with it, and
	// costs no wake.
	c2, _, err := r.candidate(f.m.liveRoutes(), 1, "", extract.Link{URL: "https://example.com/p/2", Kind: jobspec.KindDetail})
	if err != nil {
		t.Fatal(err)
	}
	woken := map[int]bool{}
	if _, err := r.admitBatch(f.ctx, dedup.Batch{Candidates: []dedup.Candidate{c2}}, "", []int{3}, woken); err != nil {
		t.Fatal(err)
	}
	if len(woken) != 0 {
		t.Errorf("woken %v for a task pushed behind another", woken)
	}
	if n := f.rdb.LLen(f.ctx, c2.Queue).Val(); n != 2 {
		t.Errorf("slave 3's queue holds %d tasks, want 2", n)
	}
}

// TestJobRunner_undecodableListPage: a frontier entry that is no list
// page is counted list_failed and committed, so the round can finish.
func TestJobRunner_undecodableListPage(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	r := f.runner(t, 0)
	f.rdb.RPush(f.ctx, f.jk.Frontier(), "{not a list page")
	f.processEntries(t, r, 1, nil)
	if n := f.rdb.LLen(f.ctx, f.jk.Frontier()).Val() + f.rdb.ZCard(f.ctx, f.jk.FrontierActive()).Val(); n != 0 {
		t.Errorf("%d entries left on the frontier", n)
	}
	if got := f.rdb.HGet(f.ctx, f.jk.Stats(), cluster.StatListFailed).Val(); got != "1" {
		t.Errorf("list_failed = %q, want 1", got)
	}
}
