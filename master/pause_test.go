package master

import (
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
)

// TestMaster_pauseSkipsRounds (issue 32): a job paused between rounds
// starts none while it is paused, however many come due on the cluster's
// clock; resumed, it starts the one due at once and no more (the missed
// rounds are skipped, not made up). The master tells Deps.OnJobState of
// each change it sees: paused, then finished again, running, finished.
func TestMaster_pauseSkipsRounds(t *testing.T) {
	rdb, keys, clock := testenv.MovedRedis(t)
	opts := DefaultOptions()
	opts.Tick = 20 * time.Millisecond
	f := newFixtureOn(t, rdb, keys, opts)
	reads := testenv.CountCommands(rdb, func(name string, args []any) bool {
		return name == "hgetall" && len(args) > 1 && args[1] == f.jk.State() // the runner reads the job's state
	})
	var (
		mu      sync.Mutex
		changes []string
	)
	f.m.deps.OnJobState = func(c JobStateChange) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, c.From+">"+c.To)
	}
	srv := serveSite(t, map[string]string{"/list": `<html><body>no items yet</body></html>`})
	f.submitSpec(t, func(s *jobspec.Job) { s.RecrawlEvery = jobspec.Duration(time.Hour) }, srv.URL+"/list")
	liveSlave(t, f, 0)
	runMaster(t, f)
	waitRound(t, f, "1")

	l := ledger.New(rdb, f.jk)
	if from, err := l.Pause(f.ctx, clock.Now()); err != nil || from != cluster.StateFinished {
		t.Fatalf("Pause = %q, %v; want paused between rounds", from, err)
	}
	clock.Advance(2*time.Hour + time.Minute) // two rounds come due
	seen := reads.Load()
	testenv.Eventually(t, time.Minute, "the master to read the paused job's state twice", func() bool { return reads.Load() >= seen+2 })
	if st := jobStateHash(t, f); st[cluster.StateRound] != "1" || st[cluster.StateField] != cluster.StatePaused {
		t.Fatalf("paused with two rounds due: %v; want round 1, paused", st)
	}

	if state, err := l.Resume(f.ctx); err != nil || state != cluster.StateFinished {
		t.Fatalf("Resume = %q, %v", state, err)
	}
	second := waitRound(t, f, "2")
	if next := parseStamp(t, second[cluster.StateNextRoundAt]); next.Before(clock.Now().Add(59 * time.Minute)) {
		t.Errorf("after round 2 the next is at %s, due already: a missed round would be made up", next)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"pending>running", "running>finished", "finished>paused", "paused>finished", "finished>running", "running>finished"}
	if len(changes) != len(want) {
		t.Fatalf("changes told: %v, want %v", changes, want)
	}
	for i := range want {
		if changes[i] != want[i] {
			t.Errorf("changes told: %v, want %v", changes, want)
			break
		}
	}
}
