package master

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// TestMaster_jobLease: a master's scan takes the jobs with work that
// nobody owns (not a finished one) and runs them; another master leaves a
// job alone while its lease lives; a master that finds its lease taken
// stops its runner and forgets the job; one that stops releases its
// leases, so another takes the job over at its next scan.
func TestMaster_jobLease(t *testing.T) {
	f := newFixture(t)
	f.submit(t, "https://example.com/list/0")
	old := f.keys.Job("old")
	f.rdb.HSet(f.ctx, old.State(), cluster.StateField, cluster.StateFinished)
	f.rdb.ZAdd(f.ctx, f.keys.Jobs(), redis.Z{Score: 0, Member: "old"})
	opts := f.m.opts
	opts.ID = "other-master"
	other, err := New(opts, f.m.deps)
	if err != nil {
		t.Fatal(err)
	}
	owns := func(m *Master, job string) bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.jobs[job] != nil
	}

	f.m.scanJobs(f.ctx)
	if !owns(f.m, "news") || owns(f.m, "old") || f.rdb.Get(f.ctx, f.jk.Owner()).Val() != f.m.token {
		t.Fatalf("after a scan: owns news %v, old %v, owner %q; want news only, under the master's token",
			owns(f.m, "news"), owns(f.m, "old"), f.rdb.Get(f.ctx, f.jk.Owner()).Val())
	}
	other.scanJobs(f.ctx)
	if owns(other, "news") {
		t.Fatal("a second master took a job whose lease lives")
	}

	f.rdb.Set(f.ctx, f.jk.Owner(), other.token, 0) // the lease lapsed and was taken
	f.m.scanJobs(f.ctx)
	if owns(f.m, "news") {
		t.Fatal("the master kept a job whose lease another holds")
	}
	f.m.wg.Wait() // its runner stopped

	f.rdb.Del(f.ctx, f.jk.Owner())
	other.scanJobs(f.ctx)
	if !owns(other, "news") {
		t.Fatal("the second master did not take the job nobody owns")
	}
	other.stopAll()
	if n := f.rdb.Exists(f.ctx, f.jk.Owner()).Val(); n != 0 {
		t.Error("a stopped master kept its lease: no other can take the job over at once")
	}
	f.m.scanJobs(f.ctx)
	if !owns(f.m, "news") {
		t.Error("the job released was not taken over at the next scan")
	}
	f.m.stopAll()
}
