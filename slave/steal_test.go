package slave

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/membership"
	"github.com/crawler-dev/crawler/metrics"
)

// TestSlave_stealsFromTheLongestQueue: a slave whose queue ran dry takes
// the tasks queued for a live slave that is not taking them (stalled on
// its host, say) until what is left there is less than a slave holds; every
// stolen page is fetched and counted once, as this slave's. A job that
// never gave this slave a task costs no steal: a slave that has not yet
// taken one of its own leaves a job that has none alone. A job routed by
// host is never stolen from: each host's pages stay with its slave.
func TestSlave_stealsFromTheLongestQueue(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	site := page(t)
	fast := func(spec *jobspec.Job) { spec.PerHostRPS = 1000 }
	jk := runningJobSpec(t, ctx, rdb, keys, "steal", site.URL, fast, "/own")
	const queued = 100
	for i := range queued {
		rdb.RPush(ctx, jk.Queue(1), taskFor("steal", site.URL+"/p/"+strconv.Itoa(i)))
	}
	idle := runningJobSpec(t, ctx, rdb, keys, "idle", site.URL, fast)
	for i := range queued {
		rdb.RPush(ctx, idle.Queue(1), taskFor("idle", site.URL+"/q/"+strconv.Itoa(i)))
	}
	byHost := runningJobSpec(t, ctx, rdb, keys, "byhost", site.URL, func(spec *jobspec.Job) {
		spec.PerHostRPS, spec.Routing = 1000, jobspec.RoutingHost
	}, "/own")
	for i := range queued {
		rdb.RPush(ctx, byHost.Queue(1), taskFor("byhost", site.URL+"/h/"+strconv.Itoa(i)))
	}

	// slave 1 is live but takes nothing
	members, err := membership.New(rdb, keys, membership.Options{Lease: membership.DefaultLease, MaxSlaves: DefaultOptions().MaxSlaves})
	if err != nil {
		t.Fatal(err)
	}
	aliveCtx, stopAlive := context.WithCancel(ctx)
	defer stopAlive()
	go func() {
		_ = members.KeepAlive(aliveCtx, cluster.NodeInfo{ID: 1, Weight: 1, Host: "test", Concurrency: 2, Token: "not-taking"})
	}()
	testenv.Eventually(t, 10*time.Second, "slave 1 is live", func() bool {
		table, err := members.Snapshot(ctx)
		return err == nil && len(table.Nodes) == 1
	})

	reg, err := metrics.New(metrics.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Concurrency = 2 // holds 8: it steals while slave 1 has 8 or more queued
	runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: jsonlStore(t), Metrics: reg})
	hold := 4 * opts.Concurrency
	testenv.Eventually(t, 45*time.Second, "slave 0 stole and stored all but what a slave holds", func() bool {
		st := rdb.HGetAll(ctx, jk.Stats()).Val()
		left := rdb.LLen(ctx, jk.Queue(1)).Val()
		stored, _ := strconv.Atoi(st[cluster.StatStored])
		return left < int64(hold) && int64(stored) == 1+queued-left
	})
	st := rdb.HGetAll(ctx, jk.Stats()).Val()
	if st[cluster.SlaveStat(cluster.StatStored, 0)] != st[cluster.StatStored] || st[cluster.StatFailed] != "" {
		t.Errorf("stats %v: want every page stored once, as slave 0's", st)
	}
	if n := rdb.LLen(ctx, jk.Queue(0)).Val() + rdb.ZCard(ctx, jk.Inflight(0)).Val(); n != 0 {
		t.Errorf("%d tasks left on slave 0", n)
	}
	stolen := metricFamily(t, reg, "crawler_tasks_stolen_total").GetMetric()
	if want := queued - rdb.LLen(ctx, jk.Queue(1)).Val(); len(stolen) != 1 || stolen[0].GetCounter().GetValue() != float64(want) {
		t.Errorf("crawler_tasks_stolen_total = %v, want one series of the %d moved", stolen, want)
	}
	if n := rdb.LLen(ctx, idle.Queue(1)).Val(); n != queued {
		t.Errorf("%d of the idle job's %d tasks left on slave 1: slave 0 stole from a job it had no task of", n, queued)
	}
	if n := rdb.LLen(ctx, byHost.Queue(1)).Val(); n != queued {
		t.Errorf("%d of the job routed by host's %d tasks left on slave 1: slave 0 stole them", n, queued)
	}
	if st := rdb.HGet(ctx, byHost.Stats(), cluster.StatStored).Val(); st != "1" {
		t.Errorf("the job routed by host stored %q pages, want its own 1", st)
	}
}
