package master

import (
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
)

// TestMaster_roundOnMovedClock (issue 19): rounds are scheduled on the
// cluster's clock (Redis TIME), not the master's host clock. On a Redis
// whose clock only the test moves, a job that recrawls every hour finishes
// round 1 with its next round an hour after, by that clock; a minute
// short of the hour the master, having looked at the clock since, still
// waits; once the clock passes the hour, round 2 starts and finishes
// without anyone waiting an hour, and its times are the server's.
func TestMaster_roundOnMovedClock(t *testing.T) {
	rdb, keys, clock := testenv.MovedRedis(t)
	reads := testenv.CountCommands(rdb, func(name string, _ []any) bool { return name == "time" }) // the master's looks at the cluster's clock
	opts := DefaultOptions()
	opts.Tick = 20 * time.Millisecond
	f := newFixtureOn(t, rdb, keys, opts)
	srv := serveSite(t, map[string]string{"/list": `<html><body>no items yet</body></html>`})
	f.submitSpec(t, func(s *jobspec.Job) { s.RecrawlEvery = jobspec.Duration(time.Hour) }, srv.URL+"/list")
	liveSlave(t, f, 0)
	runMaster(t, f)
	start := clock.Now()

	first := waitRound(t, f, "1")
	finished1 := parseStamp(t, first[cluster.StateFinishedAt])
	next := parseStamp(t, first[cluster.StateNextRoundAt])
	if gap := next.Sub(finished1); gap < time.Hour || gap > time.Hour+time.Second || finished1.Sub(start).Abs() > time.Minute {
		t.Fatalf("round 1 finished at %s with the next at %s; want the server's time (%s) and an hour after", finished1, next, start)
	}

	clock.Advance(time.Hour - time.Minute)
	seen := reads.Load()
	testenv.Eventually(t, time.Minute, "the master reads the clock twice after the move", func() bool { return reads.Load() >= seen+2 })
	if st := jobStateHash(t, f); st[cluster.StateRound] != "1" || st[cluster.StateField] != cluster.StateFinished {
		t.Fatalf("a minute before the next round: %v; want round 1 finished, waiting", st)
	}

	clock.Advance(time.Minute + 5*time.Second)
	second := waitRound(t, f, "2")
	if started := parseStamp(t, second[cluster.StateStartedAt]); started.Before(next.Truncate(time.Second)) {
		t.Errorf("round 2 started at %s, before its time %s on the server's clock", started, next)
	}
	if gap := parseStamp(t, second[cluster.StateNextRoundAt]).Sub(parseStamp(t, second[cluster.StateFinishedAt])); gap < time.Hour || gap > time.Hour+time.Second {
		t.Errorf("round 2: %v; want the next round an hour after it finished", second)
	}
}

// waitRound waits until the job's round is finished and returns its state.
func waitRound(t *testing.T, f *fixture, round string) map[string]string {
	t.Helper()
	var st map[string]string
	testenv.Eventually(t, time.Minute, "round "+round+" finished", func() bool {
		st = jobStateHash(t, f)
		return st[cluster.StateRound] == round && st[cluster.StateField] == cluster.StateFinished
	})
	return st
}

func jobStateHash(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	st, err := f.rdb.HGetAll(f.ctx, f.jk.State()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func parseStamp(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("state time %q: %v", s, err)
	}
	return at
}
