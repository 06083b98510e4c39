package master

import (
	"context"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/membership"
	"github.com/crawler-dev/crawler/queue"
)

// liveSlave registers slave id in the node table and keeps it live until
// the test ends, as a slave process does.
func liveSlave(t *testing.T, f *fixture, id int) {
	t.Helper()
	reg, err := membership.New(f.rdb, f.keys, membership.Options{MaxSlaves: f.m.opts.MaxSlaves})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = reg.KeepAlive(ctx, cluster.NodeInfo{ID: id, Weight: 1, Host: "test", PID: 1, Concurrency: 1, Token: "t"})
	}()
	t.Cleanup(func() { stop(); <-done })
}

// runMaster runs the fixture's master until the test ends.
func runMaster(t *testing.T, f *fixture) {
	t.Helper()
	ctx, stop := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- f.m.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// TestMaster_Run_crawl: a running master takes a submitted job, walks its
// list pages once slaves are live, routes each new detail link once (a
// link on two pages is a duplicate), and finishes the round once the
// slaves have acknowledged every task, the counters adding up.
func TestMaster_Run_crawl(t *testing.T) {
	f := newFixture(t)
	site := serveSite(t, map[string]string{
		"/list":        `<div class="item"><a href="/p/1">1</a><a href="/p/2">2</a></div><a class="next" href="/list?page=2">next</a>`,
		"/list?page=2": `<div class="item"><a href="/p/2">2</a><a href="/p/3">3</a></div>`,
	})
	f.submitSpec(t, func(s *jobspec.Job) { s.NextLink = &jobspec.LinkRule{CSS: "a.next"} }, site.URL+"/list")
	liveSlave(t, f, 0)
	runMaster(t, f)
	slave := queue.New(f.rdb, f.jk).Slave(0)
	testenv.Eventually(t, time.Minute, "the job finished, its tasks acknowledged as a slave would", func() bool {
		ds, err := slave.Take(f.ctx, 10, time.Minute)
		if err == nil && len(ds) > 0 {
			if _, err := ledger.New(f.rdb, f.jk).Ack(f.ctx, 0, outcomes(ds)); err != nil {
				t.Fatal(err)
			}
		}
		return f.rdb.HGet(f.ctx, f.jk.State(), cluster.StateField).Val() == cluster.StateFinished
	})
	st := status(t, f)
	c := st.Counters
	if c.ListPages != 2 || c.Discovered != 4 || c.Stored != 3 || c.Duplicates != 1 || c.Discovered != c.Settled() {
		t.Errorf("counters %+v: want 2 list pages, 3 stored, 1 duplicate, discovered 4 = settled", c)
	}
}

// outcomes are the stored outcomes of deliveries.
func outcomes(ds []queue.Delivery) []ledger.Outcome {
	out := make([]ledger.Outcome, len(ds))
	for i, d := range ds {
		out[i] = ledger.Outcome{Task: d.Entry}
	}
	return out
}
