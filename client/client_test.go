package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/membership"
	"github.com/crawler-dev/crawler/store"
)

// newTestClient is a Client of a fresh cluster prefix on the test Redis.
func newTestClient(t *testing.T) (*Client, redis.UniversalClient, cluster.Keys) {
	t.Helper()
	rdb, keys := testenv.Redis(t)
	c, err := New(rdb, Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return c, rdb, keys
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestNew: MaxSlaves defaults to the cluster's default and is refused
// outside the node table's bounds, by name.
func TestNew(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	c, err := New(rdb, Options{Keys: keys})
	if err != nil || c.maxSlaves != cluster.DefaultMaxSlaves {
		t.Fatalf("New(MaxSlaves 0) = %+v, %v; want the default table", c, err)
	}
	for _, n := range []int{-1, cluster.MaxSlavesLimit + 1} {
		var fe *cluster.FieldError
		if _, err := New(rdb, Options{Keys: keys, MaxSlaves: n}); !errors.As(err, &fe) || fe.Field != "MaxSlaves" {
			t.Errorf("New(MaxSlaves %d) = %v, want a MaxSlaves field error", n, err)
		}
	}
}

// TestClient_Status: a job's counters, its slaves' shares and queues, its
// rounds, as masters and slaves record them, read back as client status
// shows them.
func TestClient_Status(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx := testCtx(t)
	if _, err := c.Status(ctx, "nope"); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("Status of an unknown job = %v, want ErrJobNotFound", err)
	}
	if err := c.Submit(ctx, testJob("news", "https://example.com/")); err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx, "news")
	if err != nil || st.State != cluster.StatePending || st.SubmittedAt == "" || st.Counters.Discovered != 0 {
		t.Fatalf("a submitted job = %+v, %v; want pending, submitted, nothing counted", st, err)
	}
	jk := keys.Job("news")
	rdb.HSet(ctx, jk.State(), cluster.StateField, cluster.StateRunning, cluster.StateRound, 2)
	rdb.HSet(ctx, jk.Stats(), cluster.StatListPages, 3, cluster.StatRouted, 10, cluster.StatDuplicates, 4,
		cluster.StatStored, 6, cluster.StatFailed, 1, cluster.StatSkipped, 1,
		cluster.SlaveStat(cluster.StatRouted, 0), 7, cluster.SlaveStat(cluster.StatStored, 0), 5,
		cluster.SlaveStat(cluster.StatRouted, 5), 3, cluster.SlaveStat(cluster.StatStored, 5), 1, cluster.SlaveStat(cluster.StatFailed, 5), 1,
		cluster.StatNew, 4, cluster.StatChanged, 2, cluster.RoundStat(cluster.StatNew, 1), 4, cluster.RoundStat(cluster.StatChanged, 2), 2)
	rdb.RPush(ctx, jk.Queue(0), "t1")
	rdb.ZAdd(ctx, jk.Inflight(5), redis.Z{Score: 1, Member: "t2"})

	st, err = c.Status(ctx, "news")
	if err != nil {
		t.Fatal(err)
	}
	n := st.Counters
	if st.State != cluster.StateRunning || st.Round != 2 || n.Discovered != 14 || n.Stored != 6 || n.Queued != 1 || n.InFlight != 1 {
		t.Errorf("status = %+v; want running round 2, 14 discovered (10 routed + 4 duplicates), 1 queued, 1 in flight", st)
	}
	if n.Settled() != 12 {
		t.Errorf("Settled = %d, want 6+1+1+4", n.Settled())
	}
	if s0, s5 := st.Slaves["0"], st.Slaves["5"]; s0 != (SlaveCounts{Routed: 7, Stored: 5, Queued: 1}) ||
		s5 != (SlaveCounts{Routed: 3, Stored: 1, Failed: 1, InFlight: 1}) || len(st.Slaves) != 2 {
		t.Errorf("slaves = %+v", st.Slaves)
	}
	if n.New != 4 || n.Changed != 2 || st.Rounds["1"].New != 4 || st.Rounds["2"].Changed != 2 || len(st.Rounds) != 2 {
		t.Errorf("rounds: totals %+v, by round %+v", n.RoundCounts, st.Rounds)
	}
}

// TestClient_Status_finishedSkipsQueues: a finished job's queues are not
// read (they are empty), but a cancelled one's tasks in flight are shown.
func TestClient_Status_finishedSkipsQueues(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx := testCtx(t)
	for _, name := range []string{"done", "cancelled"} {
		if err := c.Submit(ctx, testJob(name, "https://example.com/")); err != nil {
			t.Fatal(err)
		}
		jk := keys.Job(name)
		rdb.HSet(ctx, jk.State(), cluster.StateField, cluster.StateFinished)
		rdb.ZAdd(ctx, jk.Inflight(1), redis.Z{Score: 1, Member: "late"})
	}
	rdb.HSet(ctx, keys.Job("cancelled").State(), cluster.StateCancelledAt, "2026-01-01T00:00:00Z")
	if st, err := c.Status(ctx, "done"); err != nil || st.Counters.InFlight != 0 {
		t.Errorf("finished job = %+v, %v; want no queue read", st, err)
	}
	if st, err := c.Status(ctx, "cancelled"); err != nil || st.Counters.InFlight != 1 || st.Slaves["1"].InFlight != 1 {
		t.Errorf("cancelled job = %+v, %v; want its task in flight shown", st, err)
	}
}

// TestCounters_NothingStored: why a job stored nothing, in the job file's
// words, for each way it can happen.
func TestCounters_NothingStored(t *testing.T) {
	for _, tt := range []struct {
		c    Counters
		want string
	}{
		{Counters{Stored: 1}, ""},
		{Counters{}, "no list page could be fetched"},
		{Counters{ListPages: 2}, "no item link was found on the 2 list pages"},
		{Counters{ListPages: 1, Discovered: 3, Duplicates: 3}, "every one of the 3 detail pages discovered was a duplicate"},
		{Counters{ListPages: 1, Discovered: 3, Cancelled: 3}, "cancelled before a detail page was stored"},
		{Counters{ListPages: 1, Discovered: 3, Failed: 2, Skipped: 1}, "no detail page could be stored (2 failed, 1 skipped"},
	} {
		if got := tt.c.NothingStored(); (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("NothingStored(%+v) = %q, want %q", tt.c, got, tt.want)
		}
	}
}

// TestClient_Wait: Wait reports every status it reads and returns once
// the job is finished; an interruption returns the last status read and
// the context's error; an unknown job fails at once.
func TestClient_Wait(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx := testCtx(t)
	if _, err := c.Wait(ctx, "nope", time.Millisecond, nil); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("Wait for an unknown job = %v, want ErrJobNotFound", err)
	}
	if err := c.Submit(ctx, testJob("w", "https://example.com/")); err != nil {
		t.Fatal(err)
	}
	reads := 0
	st, err := c.Wait(ctx, "w", time.Millisecond, func(s *Status) {
		if reads++; reads == 2 { // a master finishes the job between two reads
			rdb.HSet(ctx, keys.Job("w").State(), cluster.StateField, cluster.StateFinished)
		}
	})
	if err != nil || st.State != cluster.StateFinished || reads != 3 {
		t.Fatalf("Wait = %+v, %v after %d reads; want finished on the third", st, err, reads)
	}

	if err := c.Submit(ctx, testJob("forever", "https://example.com/")); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	st, err = c.Wait(wctx, "forever", time.Millisecond, func(*Status) { cancel() })
	if !errors.Is(err, context.Canceled) || st == nil || st.State != cluster.StatePending {
		t.Errorf("interrupted Wait = %+v, %v; want the last status and context.Canceled", st, err)
	}
}

// TestClient_Jobs lists every job, oldest submission first, leaving out a
// name indexed by a submission still being written.
func TestClient_Jobs(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx := testCtx(t)
	for _, name := range []string{"first", "second"} {
		if err := c.Submit(ctx, testJob(name, "https://example.com/")); err != nil {
			t.Fatal(err)
		}
	}
	rdb.ZAdd(ctx, keys.Jobs(), redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: "half-written"})
	jobs, err := c.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range jobs {
		names = append(names, j.Job)
	}
	if strings.Join(names, " ") != "first second" {
		t.Errorf("Jobs = %q, want first second", names)
	}
}

// TestClient_Reset removes every key of the job and its index entry, and
// nothing of another job, even one whose name starts with it; a job never
// submitted is ErrJobNotFound, a running one ErrJobBusy.
func TestClient_Reset(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx := testCtx(t)
	for _, name := range []string{"a", "ab"} {
		if err := c.Submit(ctx, testJob(name, "https://example.com/")); err != nil {
			t.Fatal(err)
		}
		rdb.HSet(ctx, keys.Job(name).State(), cluster.StateField, cluster.StateFinished)
	}
	if _, err := c.Reset(ctx, "nope"); !errors.Is(err, ErrJobNotFound) {
		t.Errorf("Reset of an unknown job = %v, want ErrJobNotFound", err)
	}
	n, err := c.Reset(ctx, "a")
	if err != nil || n < 3 {
		t.Fatalf("Reset = %d keys, %v; want its spec, state and seeds at least", n, err)
	}
	if left := rdb.Keys(ctx, keys.Job("a").Tag()+"*").Val(); len(left) != 0 {
		t.Errorf("keys left: %q", left)
	}
	if _, err := c.Status(ctx, "a"); !errors.Is(err, ErrJobNotFound) {
		t.Errorf("Status after Reset = %v, want ErrJobNotFound", err)
	}
	if jobs, err := c.Jobs(ctx); err != nil || len(jobs) != 1 || jobs[0].Job != "ab" {
		t.Errorf("Jobs after Reset = %v, %v; want ab alone", jobs, err)
	}
	rdb.HSet(ctx, keys.Job("ab").State(), cluster.StateField, cluster.StateRunning)
	if _, err := c.Reset(ctx, "ab"); !errors.Is(err, ErrJobBusy) {
		t.Errorf("Reset of a running job = %v, want ErrJobBusy", err)
	}
}

// TestClient_PreviousRun: a job finished within the new submission's
// dupefilter window is its previous run; one finished before it, one not
// finished or never submitted is none.
func TestClient_PreviousRun(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx := testCtx(t)
	if err := c.Submit(ctx, testJob("p", "https://example.com/")); err != nil {
		t.Fatal(err)
	}
	if prev, err := c.PreviousRun(ctx, "p", time.Hour); err != nil || prev != nil {
		t.Errorf("PreviousRun of a pending job = %v, %v; want none", prev, err)
	}
	finishedAgo := func(d time.Duration) {
		rdb.HSet(ctx, keys.Job("p").State(), cluster.StateField, cluster.StateFinished,
			cluster.StateFinishedAt, time.Now().Add(-d).UTC().Format(time.RFC3339))
	}
	finishedAgo(time.Minute)
	if prev, err := c.PreviousRun(ctx, "p", time.Hour); err != nil || prev == nil || prev.Job != "p" {
		t.Errorf("PreviousRun inside the window = %v, %v; want the job", prev, err)
	}
	finishedAgo(2 * time.Hour)
	if prev, err := c.PreviousRun(ctx, "p", time.Hour); err != nil || prev != nil {
		t.Errorf("PreviousRun past the window = %v, %v; want none", prev, err)
	}
	if prev, err := c.PreviousRun(ctx, "never", time.Hour); err != nil || prev != nil {
		t.Errorf("PreviousRun of an unknown job = %v, %v; want none", prev, err)
	}
}

// TestClient_RetryFailed re-enqueues the job's failed detail pages once,
// sends a finished job back to running, and leaves list pages and other
// jobs' failures alone.
func TestClient_RetryFailed(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx := testCtx(t)
	if _, err := c.RetryFailed(ctx, "nope", nil); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("RetryFailed of an unknown job = %v, want ErrJobNotFound", err)
	}
	if err := c.Submit(ctx, testJob("r", "https://example.com/")); err != nil {
		t.Fatal(err)
	}
	jk := keys.Job("r")
	rdb.HSet(ctx, jk.State(), cluster.StateField, cluster.StateFinished, cluster.StateFinishedAt, "2026-01-01T00:00:00Z")
	failure := func(job, kind, fp string) store.Failure {
		return store.Failure{ID: job + ":" + fp, Job: job, Kind: kind, URL: "https://example.com/" + fp}
	}
	failures := []store.Failure{failure("r", store.KindDetail, "aa"), failure("r", store.KindDetail, "bb"),
		failure("r", store.KindList, "cc"), failure("other", store.KindDetail, "dd")}
	if n, err := c.RetryFailed(ctx, "r", failures); err != nil || n != 2 {
		t.Fatalf("RetryFailed = %d, %v; want the 2 detail pages of the job", n, err)
	}
	st, err := c.Status(ctx, "r")
	if err != nil || st.State != cluster.StateRunning || st.FinishedAt != "" {
		t.Errorf("after RetryFailed: %+v, %v; want running again", st, err)
	}
	tasks := rdb.LRange(ctx, jk.Retry(), 0, -1).Val()
	if len(tasks) != 2 {
		t.Fatalf("retry list = %q", tasks)
	}
	if task, err := cluster.DecodeTask(tasks[0]); err != nil || task.URL != "https://example.com/aa" || !task.Retry || task.Job != "r" {
		t.Errorf("retried task = %+v, %v", task, err)
	}
	if n, err := c.RetryFailed(ctx, "r", failures); err != nil || n != 0 {
		t.Errorf("second RetryFailed = %d, %v; want nothing enqueued twice", n, err)
	}
}

// TestClient_Crew: whether a master ever ran under the prefix and how many
// slaves are live; WaitSlaves returns once as many have registered.
func TestClient_Crew(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx := testCtx(t)
	if crew, err := c.Crew(ctx); err != nil || crew.MasterRan || crew.Slaves != 0 {
		t.Fatalf("Crew of an empty cluster = %+v, %v", crew, err)
	}
	reg, err := membership.New(rdb, keys, membership.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for id := range 2 {
		if err := reg.Register(ctx, cluster.NodeInfo{ID: id, Weight: 1, Host: "h", PID: 1, Concurrency: 1, Token: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitSlaves(ctx, 2); err != nil {
		t.Fatal(err)
	}
	rdb.HSet(ctx, keys.Nodes().Config(), "assign_mode", "rendezvous") // a master recorded its routing
	if crew, err := c.Crew(ctx); err != nil || !crew.MasterRan || crew.Slaves != 2 {
		t.Errorf("Crew = %+v, %v; want a master and 2 slaves", crew, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.WaitSlaves(wctx, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitSlaves for a third, interrupted = %v", err)
	}
}

// TestClient_Submit_refusesInvalid: a job the masters could not run is
// refused at submission, naming the field, and nothing of it is written;
// a refused name leaves no index entry behind.
func TestClient_Submit_refusesInvalid(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx := testCtx(t)
	for _, tt := range []struct {
		name string
		edit func(*jobspec.Job)
		want string
	}{
		{"a name out of its alphabet", func(s *jobspec.Job) { s.Name = "News!" }, "name:"},
		{"no seed", func(s *jobspec.Job) { s.Seeds = nil }, "seeds: at least one seed URL"},
		{"a seed that is not http", func(s *jobspec.Job) { s.Seeds = []string{"ftp://example.com/"} }, "seeds[0]"},
		{"a bad selector", func(s *jobspec.Job) { s.Fields = map[string]jobspec.FieldRule{"title": {CSS: "h1[["}} }, "title"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := testJob("bad", "https://example.com/")
			tt.edit(spec)
			err := c.Submit(ctx, spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Submit = %v, want an error naming %q", err, tt.want)
			}
			if n := rdb.ZCard(ctx, keys.Jobs()).Val(); n != 0 {
				t.Errorf("a refused job left %d index entries", n)
			}
			if left := rdb.Keys(ctx, keys.Job(spec.Name).Tag()+"*").Val(); len(left) != 0 {
				t.Errorf("a refused job left keys %q", left)
			}
		})
	}
}

// TestNotRetried counts the job's failures RetryFailed leaves, by kind.
func TestNotRetried(t *testing.T) {
	failures := []store.Failure{
		{ID: "r:aa", Job: "r", Kind: store.KindDetail}, {ID: "r:bb", Job: "r", Kind: store.KindList},
		{ID: "r:cc", Job: "r", Kind: "missing_field"}, {ID: "r:dd", Job: "r", Kind: "missing_field"},
		{ID: "o:ee", Job: "o", Kind: "missing_field"},
	}
	got := NotRetried("r", failures)
	if len(got) != 2 || got[store.KindList] != 1 || got["missing_field"] != 2 {
		t.Errorf("NotRetried = %v, want list 1, missing_field 2", got)
	}
}
