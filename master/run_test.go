package master

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/membership"
)

// cancelOnScan is a go-redis hook that cancels the master's context as
// its first job scan (ZRANGE of the jobs) goes out, and lets the command
// go on only once the membership watch has seen the cancel and ended: the
// coordinator then finds both its context and the watch done.
type cancelOnScan struct {
	t      *testing.T
	jobs   string
	cancel context.CancelFunc
	fired  atomic.Bool
}

func (h *cancelOnScan) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *cancelOnScan) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *cancelOnScan) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if cmd.Name() == "zrange" && len(args) > 1 && args[1] == h.jobs && h.fired.CompareAndSwap(false, true) {
			h.cancel()
			testenv.Eventually(h.t, 5*time.Second, "the membership watch ends", func() bool { return !watching() })
		}
		return next(ctx, cmd)
	}
}

// watching reports whether a membership watch runs in this process.
func watching() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "membership.(*Registry).WatchEvery")
}

// TestMaster_Run_cancelDuringScan (issue 9, defect 1): when the context
// ends while the jobs are scanned, the membership watch ends too and both
// are ready at once; whichever the coordinator sees first, Run joins the
// watch exactly once and returns nil instead of waiting forever on a
// drained channel. The race is a coin toss, so it is run many times.
func TestMaster_Run_cancelDuringScan(t *testing.T) {
	for i := 0; i < 20; i++ {
		f := newFixture(t)
		ctx, cancel := context.WithCancel(f.ctx)
		hook := &cancelOnScan{t: t, jobs: f.keys.Jobs(), cancel: cancel}
		f.rdb.AddHook(hook)
		done := make(chan error, 1)
		go func() { done <- f.m.Run(ctx) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run %d: Run = %v, want nil", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d: Run did not return after its context was cancelled during a job scan", i)
		}
		if !hook.fired.Load() {
			t.Fatalf("run %d: the job scan never ran", i)
		}
	}
}

// TestMaster_Run_watchError (issue 8, defect 12): a membership watch that
// fails (the cluster's max_slaves differs) stops Run with its error; a
// master stopped before it started returns nil, not "master: %!w(<nil>)".
func TestMaster_Run_watchError(t *testing.T) {
	f := newFixture(t)
	f.rdb.HSet(f.ctx, f.keys.Nodes().Config(), membership.ConfigMaxSlaves, f.m.opts.MaxSlaves+1)
	done := make(chan error, 1)
	go func() { done <- f.m.Run(f.ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, membership.ErrMaxSlavesMismatch) {
			t.Errorf("Run with another max_slaves = %v, want ErrMaxSlavesMismatch", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop on the watch's error")
	}
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	if err := newFixture(t).m.Run(ctx); err != nil {
		t.Errorf("Run on a cancelled context = %v, want nil", err)
	}
}

// TestMaster_Run_submitWakes: a master takes up a submitted job as soon as
// the client says so (cluster.Keys.JobsChannel), not at its next tick: with
// a tick of ten minutes, the job is owned within seconds of its submission.
func TestMaster_Run_submitWakes(t *testing.T) {
	f := newFixture(t)
	f.m.opts.Tick, f.m.opts.JobLease = 10*time.Minute, 30*time.Minute
	jobs := f.keys.Jobs()
	scans := testenv.CountCommands(f.rdb, func(name string, args []any) bool { // the master's job scans
		return name == "zrange" && len(args) > 1 && args[1] == jobs
	})
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- f.m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testenv.Eventually(t, 30*time.Second, "the master listens for job changes", func() bool {
		n, err := f.rdb.PubSubNumSub(f.ctx, f.keys.JobsChannel()).Result()
		return err == nil && n[f.keys.JobsChannel()] > 0
	})
	testenv.Eventually(t, 30*time.Second, "the master's first scan of the jobs", func() bool { return scans.Load() > 0 })
	f.submit(t, "http://127.0.0.1:1/list")
	testenv.Eventually(t, 30*time.Second, "the master owns the submitted job", func() bool {
		owner, err := f.rdb.Get(f.ctx, f.jk.Owner()).Result()
		return err == nil && owner != ""
	})
}
