package main

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/collectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestFaults_MongoOutage: the MongoDB-wire server is unreachable for 30 s
// mid-crawl (connections closed, new ones refused) for every process;
// slaves hold or retry their pages, nothing is acknowledged that is not
// stored, nothing is dead-lettered for it, and the crawl ends exactly
// right once it is back.
func TestFaults_MongoOutage(t *testing.T) {
	t.Parallel()
	c := newCutCrawl(t, "mongo", faultSite, "mongo", func(e *clusterEnv) {
		e.slaveArgs = append(e.slaveArgs, "--concurrency", "4")
	})
	env := c.env
	procs := []*proc{c.cut.startMaster(t, "master"), c.cut.startSlave(t, 0), c.cut.startSlave(t, 1)}
	env.waitSlaves(t, 0, 1)
	c.submit(t)
	env.waitProgress(t, "mongo", "200 pages stored", func(c client.Counters) bool { return c.Stored >= 200 })

	c.part.down()
	atDown := status(t, env, "mongo")
	time.Sleep(30 * time.Second) // the outage itself
	during := status(t, env, "mongo")
	c.part.up(t)
	t.Logf("stored %d when MongoDB went away, %d when it came back", atDown.Counters.Stored, during.Counters.Stored)

	st := c.finish(t)
	if st.Counters.DeadLetters != 0 {
		t.Errorf("%d pages dead-lettered for an outage of the store", st.Counters.DeadLetters)
	}
	noneExited(t, procs...)
}

// cutCrawl is a crawl of a demo site by one job, with a partition between
// one server (redis or mongo) and the processes started through cut; the
// others, through env, reach it directly.
type cutCrawl struct {
	env, cut  clusterEnv
	part      *partition
	site      *demosite.Site
	job, base string
	file      string // the job file
}

// newCutCrawl serves the site and writes the job; edit, when not nil,
// changes the environment of every process before it is split.
func newCutCrawl(t *testing.T, job string, siteOpts demosite.Options, server string, edit func(*clusterEnv)) *cutCrawl {
	t.Helper()
	c := &cutCrawl{env: newClusterEnv(t), job: job}
	if edit != nil {
		edit(&c.env)
	}
	c.site, c.base = serveSite(t, siteOpts)
	c.file = writeJob(t, job, c.base)
	c.cut = c.env
	switch server {
	case "redis":
		c.part = newPartition(t, job+"-redis", c.env.redis)
		c.cut.redis = c.part.url(c.env.redis)
	case "mongo":
		c.part = newPartition(t, job+"-mongo", c.env.mongo)
		c.cut.mongo = c.part.url(c.env.mongo)
	default:
		t.Fatalf("no partition in front of %q", server)
	}
	return c
}

// submit submits the job.
func (c *cutCrawl) submit(t *testing.T) { c.env.submit(t, c.job, c.file) }

// finish waits for the job to finish, checks that the crawl is exact and
// returns its status.
func (c *cutCrawl) finish(t *testing.T) client.Status {
	t.Helper()
	st := c.env.wait(t, c.job, 4*time.Minute)
	checkCrawl(t, c.site, c.base, st, c.env.results(t, c.job), c.env.failedURLs(t, c.job))
	return st
}

// noneExited fails the test for each process that exited by itself.
func noneExited(t *testing.T, procs ...*proc) {
	t.Helper()
	for _, p := range procs {
		select {
		case <-p.done:
			t.Errorf("%s exited by itself:\n%s", p.name, tail(p.out.String(), 3000))
		default:
		}
	}
}

// partition is a Toxiproxy proxy, run in the test on loopback, between
// processes and a server (Redis, MongoDB): cut makes it a blackhole
// (connections are accepted and stay open, no byte passes either way,
// nothing is reset), heal lets bytes through again; down and up stop and
// start it, as if the server went away.
type partition struct {
	proxy *toxiproxy.Proxy
}

func newPartition(t *testing.T, name, serverURL string) *partition {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("server URL %q: %v", serverURL, err)
	}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	srv.Metrics.ProxyMetrics = collectors.NewProxyMetricCollectors()
	p := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", u.Host)
	if err := p.Start(); err != nil {
		t.Fatalf("start toxiproxy %s: %v", name, err)
	}
	t.Cleanup(p.Stop)
	return &partition{proxy: p}
}

// url is the server's URL through the proxy.
func (p *partition) url(serverURL string) string {
	u, _ := url.Parse(serverURL)
	u.Host = p.proxy.Listen
	return u.String()
}

// cut drops every byte both ways, on the connections open and new ones.
func (p *partition) cut(t *testing.T) {
	t.Helper()
	for _, stream := range []string{"upstream", "downstream"} {
		toxic := `{"name":"blackhole-` + stream + `","type":"timeout","stream":"` + stream + `","toxicity":1,"attributes":{"timeout":0}}`
		if _, err := p.proxy.Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
			t.Fatalf("add blackhole toxic: %v", err)
		}
	}
}

// down stops the proxy: its connections are closed and new ones refused,
// as when the server is down; up starts it again on the same port.
func (p *partition) down() { p.proxy.Stop() }

func (p *partition) up(t *testing.T) {
	t.Helper()
	if err := p.proxy.Start(); err != nil {
		t.Fatalf("restart toxiproxy on %s: %v", p.proxy.Listen, err)
	}
}

// heal lets bytes pass again.
func (p *partition) heal(t *testing.T) {
	t.Helper()
	for _, stream := range []string{"upstream", "downstream"} {
		if err := p.proxy.Toxics.RemoveToxic(context.Background(), "blackhole-"+stream); err != nil {
			t.Fatalf("remove blackhole toxic: %v", err)
		}
	}
}

// partitionSite takes three slaves of concurrency 2 about 15 s: the host
// allows more at once than they fetch, so two slaves are slower than three.
var partitionSite = demosite.Options{Details: 1500, PerPage: 30, Overlap: 10, Delay: 50 * time.Millisecond}

// TestPartition_SlaveBlackhole: slave 1 is cut off from Redis (a
// blackhole, not a reset) for longer than its lease while it fetches; its
// tasks are re-routed to the others; what it finishes late is fenced
// (nothing counted twice, no item stored twice); once healed it rejoins
// and takes its share of what is still queued. No process exits.
func TestPartition_SlaveBlackhole(t *testing.T) {
	t.Parallel()
	c := newCutCrawl(t, "cut", partitionSite, "redis", func(e *clusterEnv) {
		e.slaveArgs = append(e.slaveArgs, "--concurrency", "2")
	})
	env := c.env
	env.startMaster(t, "master")
	slaves := []*proc{env.startSlave(t, 0), c.cut.startSlave(t, 1), env.startSlave(t, 2)}
	env.waitSlaves(t, 0, 1, 2)
	c.submit(t)
	env.waitProgress(t, "cut", "slave 1 fetching", func(c client.Counters) bool { return c.Stored >= 200 })

	c.part.cut(t)
	// Away longer than its 5 s lease: the master drops it and moves its
	// tasks, queued and in flight, to the others.
	env.waitSlaves(t, 0, 2)
	testenv.Eventually(t, time.Minute, "slave 1's tasks re-routed", func() bool {
		return inflight(t, env, "cut", 1)+env.rdb.LLen(context.Background(), env.keys.Job("cut").Queue(1)).Val() == 0
	})
	atHeal := status(t, env, "cut")
	c.part.heal(t)
	env.waitSlaves(t, 0, 1, 2)

	st := c.finish(t)
	checkSlaveCounts(t, st)
	left := atHeal.Counters.Discovered - atHeal.Counters.Settled()
	gained := st.Slaves["1"].Stored - atHeal.Slaves["1"].Stored
	t.Logf("at the heal %d pages were left; slave 1 stored %d of them", left, gained)
	if left > 300 && gained < left/6 {
		t.Errorf("slave 1 stored %d of the %d pages left when it rejoined, want a fair share (a third)", gained, left)
	}
	noneExited(t, slaves...)
}

// TestPartition_MasterBlackhole: the master that owns the job is cut off
// from Redis while a second master runs; the job moves once, to the
// second; when healed the first learns it lost the fence and stops acting
// on the job; every list page is walked once.
func TestPartition_MasterBlackhole(t *testing.T) {
	t.Parallel()
	c := newCutCrawl(t, "moved", partitionSite, "redis", nil)
	// Only the master cut off holds the job on a short lease, so that the
	// job moves soon after the cut; master-b keeps the default lease, which
	// a loaded machine (load 30) does not stall it past, so the job moves
	// once, not back.
	c.cut.masterArgs = append(c.cut.masterArgs, "--job-lease", "2s")
	env := c.env
	a := c.cut.startMaster(t, "master-a")
	for id := 0; id < 3; id++ {
		env.startSlave(t, id)
	}
	env.waitSlaves(t, 0, 1, 2)
	c.submit(t)
	env.waitProgress(t, "moved", "10 list pages", func(c client.Counters) bool { return c.ListPages >= 10 })
	b := env.startMaster(t, "master-b")

	c.part.cut(t)
	cutAt := time.Now()
	testenv.Eventually(t, time.Minute, "the job moved to master-b", func() bool {
		owner, _, _ := strings.Cut(env.rdb.Get(context.Background(), env.keys.Job("moved").Owner()).Val(), "/")
		return owner == "master-b"
	})
	movedAt := time.Now()
	c.part.heal(t)
	// It learns at its next lease renewal, or when a commit meets the fence.
	testenv.Eventually(t, time.Minute, "master-a learned it lost the job", func() bool {
		out := a.out.String()
		return strings.Contains(out, "lost job lease") || strings.Contains(out, "job taken over by another master")
	})
	t.Logf("the job moved %v after the cut; master-a learned it lost it %v after the heal",
		movedAt.Sub(cutAt).Round(time.Millisecond), time.Since(movedAt).Round(time.Millisecond))

	st := c.finish(t)
	if st.Counters.ListPages != int64(c.site.ListPages()) {
		t.Errorf("list pages counted %d, want %d (each walked once)", st.Counters.ListPages, c.site.ListPages())
	}
	if n := strings.Count(a.out.String(), `"job acquired"`); n != 1 {
		t.Errorf("master-a acquired the job %d times, want once (the job moves once)", n)
	}
	fence, _ := env.rdb.Get(context.Background(), env.keys.Job("moved").Fence()).Int()
	t.Logf("fencing token at the end: %d", fence)
	noneExited(t, a, b)
}

// status reads the job's status.
func status(t *testing.T, env clusterEnv, job string) *client.Status {
	t.Helper()
	st, err := jobStatus(context.Background(), env.rdb, env.keys, job)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
