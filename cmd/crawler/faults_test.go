package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// faultSite is slow enough that a test can strike at about 40% progress:
// every response takes 20 ms, list pages included.
var faultSite = demosite.Options{Details: 1000, PerPage: 30, Overlap: 10, Delay: 20 * time.Millisecond}

// faultCrawl is one fault test's crawl: a site, its job, and the cluster.
type faultCrawl struct {
	env  clusterEnv
	site *demosite.Site
	base string
	job  string
	file string
}

func newFaultCrawl(t *testing.T, env clusterEnv) *faultCrawl {
	site, base := serveSite(t, faultSite)
	env.masterArgs = append(env.masterArgs, "--job-lease", "2s")
	env.slaveArgs = append(env.slaveArgs, "--concurrency", "4")
	return &faultCrawl{env: env, site: site, base: base, job: "faults", file: writeJob(t, "faults", base)}
}

// startSlaves starts slaves 0..n-1 and waits until they are live.
func (f *faultCrawl) startSlaves(t *testing.T, n int) []*proc {
	var ps []*proc
	ids := make([]int, n)
	for i := 0; i < n; i++ {
		ps = append(ps, f.env.startSlave(t, i))
		ids[i] = i
	}
	f.env.waitSlaves(t, ids...)
	return ps
}

// atStored waits until at least n detail pages are stored.
func (f *faultCrawl) atStored(t *testing.T, n int64) {
	f.env.waitProgress(t, f.job, fmt.Sprintf("%d pages stored", n), func(c client.Counters) bool { return c.Stored >= n })
}

// finish waits for the job to finish and checks the crawl is exactly right.
func (f *faultCrawl) finish(t *testing.T) client.Status {
	st := f.env.wait(t, f.job, 3*time.Minute)
	checkCrawl(t, f.site, f.base, st, f.env.results(t, f.job), f.env.failedURLs(t, f.job))
	return st
}

// TestFaults_KillSlave: kill -9 one of three slaves at about 40%; its queued
// and in-flight tasks are re-routed to the two left.
func TestFaults_KillSlave(t *testing.T) {
	t.Parallel()
	f := newFaultCrawl(t, newClusterEnv(t))
	f.env.startMaster(t, "master")
	slaves := f.startSlaves(t, 3)
	f.env.submit(t, f.job, f.file)
	f.atStored(t, 400)
	if err := slaves[1].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	st := f.finish(t)
	if s := st.Slaves["0"].Stored + st.Slaves["2"].Stored; s <= 600 {
		t.Errorf("slaves 0 and 2 stored %d; they should have taken over slave 1's share", s)
	}
}

// TestFaults_KillMaster: kill -9 the master at about 40% of the list walk
// and start it again; it resumes from Redis.
func TestFaults_KillMaster(t *testing.T) {
	t.Parallel()
	f := newFaultCrawl(t, newClusterEnv(t))
	m := f.env.startMaster(t, "master")
	f.startSlaves(t, 3)
	f.env.submit(t, f.job, f.file)
	f.env.waitProgress(t, f.job, "20 list pages", func(c client.Counters) bool { return c.ListPages >= 20 })
	if err := m.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-m.done
	f.env.startMaster(t, "master-again")
	st := f.finish(t)
	if st.Counters.ListPages != int64(f.site.ListPages()) {
		t.Errorf("list pages counted %d, want %d (each once)", st.Counters.ListPages, f.site.ListPages())
	}
}

// TestFaults_TwoMasters: two masters share the job through a lease; the
// owner is killed mid-crawl and the other takes over.
func TestFaults_TwoMasters(t *testing.T) {
	t.Parallel()
	f := newFaultCrawl(t, newClusterEnv(t))
	masters := map[string]*proc{"master-a": f.env.startMaster(t, "master-a"), "master-b": f.env.startMaster(t, "master-b")}
	f.startSlaves(t, 3)
	f.env.submit(t, f.job, f.file)
	f.env.waitProgress(t, f.job, "15 list pages", func(c client.Counters) bool { return c.ListPages >= 15 })
	owner, _, _ := strings.Cut(f.env.rdb.Get(context.Background(), f.env.keys.Job(f.job).Owner()).Val(), "/")
	victim, ok := masters[owner]
	if !ok {
		t.Fatalf("job owner %q is neither master", owner)
	}
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	f.finish(t)
	// One takeover at least; a loaded machine may delay a renewal past the
	// 2 s lease and make another, which the fence keeps just as safe.
	if fence, _ := f.env.rdb.Get(context.Background(), f.env.keys.Job(f.job).Fence()).Int(); fence < 2 {
		t.Errorf("fencing token %d, want 2 or more (a takeover)", fence)
	}
}

// TestFaults_FrozenSlave: a slave frozen with SIGSTOP holds tasks in
// flight; they are delivered again after its leases lapse, and when it
// thaws, its late acknowledgements count nothing twice.
func TestFaults_FrozenSlave(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	env.slaveArgs = []string{"--task-lease", "2s"}
	f := newFaultCrawl(t, env)
	f.env.startMaster(t, "master")
	slaves := f.startSlaves(t, 3)
	f.env.submit(t, f.job, f.file)
	f.atStored(t, 400)
	frozen := slaves[1].cmd.Process
	if err := frozen.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = frozen.Signal(syscall.SIGCONT) })
	st := f.finish(t)

	if err := frozen.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	f.env.waitSlaves(t, 0, 1, 2) // it rejoins
	after, err := jobStatus(context.Background(), f.env.rdb, f.env.keys, f.job)
	if err != nil {
		t.Fatal(err)
	}
	if after.Counters != st.Counters {
		t.Errorf("counters changed after the frozen slave thawed:\nbefore %+v\nafter  %+v", st.Counters, after.Counters)
	}
}

// TestFaults_RedisRestart: Redis (with AOF) goes away mid-crawl and comes
// back; every process reconnects and carries on.
func TestFaults_RedisRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := freePort(t)
	args := []string{"--port", port, "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes", "--save", ""}
	srv := startRedisServer(t, args...)
	env := redisEnv(t, "redis://127.0.0.1:"+port+"/0", redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port}))
	f := newFaultCrawl(t, env)
	f.env.startMaster(t, "master")
	f.startSlaves(t, 3)
	f.env.submit(t, f.job, f.file)
	f.atStored(t, 400)

	if err := srv.Process.Signal(syscall.SIGTERM); err != nil { // shuts down, flushing the AOF
		t.Fatal(err)
	}
	_ = srv.Wait()
	time.Sleep(7 * time.Second) // the outage, longer than the node (5 s) and job (2 s) leases
	startRedisServer(t, args...)
	f.finish(t)
}

// TestFaults_RedisCluster runs the whole crawl on a three-node Redis
// Cluster that the test starts itself.
func TestFaults_RedisCluster(t *testing.T) {
	t.Parallel()
	var addrs []string
	for i := 0; i < 3; i++ {
		dir := t.TempDir()
		port := freePort(t)
		startRedisServer(t, "--port", port, "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no",
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"))
		addrs = append(addrs, "127.0.0.1:"+port)
	}
	out, err := exec.Command("redis-cli", append(append([]string{"--cluster", "create"}, addrs...),
		"--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { rdb.Close() })
	testenv.Eventually(t, 30*time.Second, "cluster_state:ok", func() bool {
		info, err := rdb.ClusterInfo(context.Background()).Result()
		return err == nil && strings.Contains(info, "cluster_state:ok")
	})
	env := redisEnv(t, "redis://"+strings.Join(addrs, ","), rdb)
	site, base := serveSite(t, e2eSite)
	env.startMaster(t, "master")
	for id := 0; id < 3; id++ {
		env.startSlave(t, id)
	}
	env.waitSlaves(t, 0, 1, 2)
	env.submit(t, "news", writeJob(t, "news", base))
	st := env.wait(t, "news", 3*time.Minute)
	checkCrawl(t, site, base, st, env.results(t, "news"), env.failedURLs(t, "news"))
}

// redisEnv is a cluster env on a Redis the test started itself.
func redisEnv(t *testing.T, url string, rdb redis.UniversalClient) clusterEnv {
	uri, db := testMongo(t)
	return clusterEnv{redis: url, prefix: "crawler", mongo: uri, db: db, rdb: rdb, keys: cluster.Keys{Prefix: "crawler"}}
}

// startRedisServer runs redis-server with args until the test ends, and
// waits until it answers.
func startRedisServer(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return runRedisServer(t, args[1], args...)
}

// runRedisServer runs redis-server with args (a Sentinel's config file
// first, say) until the test ends, and waits until it answers on port.
func runRedisServer(t *testing.T, port string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("redis-server", args...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server (install it: apt-get install redis-server): %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("--- redis-server %v:\n%s", args, tail(out.String(), 3000))
		}
	})
	testenv.Eventually(t, 10*time.Second, "redis-server on port "+port, func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return cmd
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// TestClient_RetryFailed: pages that failed come back; retry-failed
// re-enqueues them, they move from failed to stored, and running it again
// re-enqueues nothing.
func TestClient_RetryFailed(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	site, base := serveSite(t, demosite.Options{Details: 300})
	env.startMaster(t, "master")
	env.startSlave(t, 0)
	env.waitSlaves(t, 0)
	env.submit(t, "retry", writeJob(t, "retry", base))
	first := env.wait(t, "retry", 2*time.Minute)
	if first.Counters.Failed != 2 {
		t.Fatalf("first crawl failed %d pages, want the 2 gone ones", first.Counters.Failed)
	}

	site.Heal()
	retry := func() string {
		out, errOut, err := crawler(t, time.Minute, append([]string{"client", "retry-failed", "--job", "retry",
			"--mongo", env.mongo}, env.flags()...)...)
		if err != nil {
			t.Fatalf("retry-failed: %v: %s", err, errOut)
		}
		return strings.TrimSpace(out)
	}
	if out := retry(); out != "2 failed pages of job retry re-enqueued" {
		t.Fatalf("retry-failed printed %q", out)
	}
	st := env.wait(t, "retry", 2*time.Minute)
	checkCrawl(t, site, base, st, env.results(t, "retry"), env.failedURLs(t, "retry"))
	if st.Counters.Recovered != 2 || st.Counters.Failed != 0 {
		t.Errorf("after retry: recovered %d, failed %d; want 2 and 0", st.Counters.Recovered, st.Counters.Failed)
	}
	if out := retry(); out != "0 failed pages of job retry re-enqueued" {
		t.Errorf("second retry-failed printed %q, want nothing re-enqueued", out)
	}
}

// TestFaults_SlaveSIGTERM: a slave stopped with SIGTERM stops taking tasks,
// finishes or hands back what it holds, leaves the node table at once (not
// after its lease) and exits 0; the crawl ends exactly right.
func TestFaults_SlaveSIGTERM(t *testing.T) {
	t.Parallel()
	f := newFaultCrawl(t, newClusterEnv(t))
	f.env.startMaster(t, "master")
	slaves := f.startSlaves(t, 3)
	f.env.submit(t, f.job, f.file)
	f.atStored(t, 400)
	if err := slaves[1].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-slaves[1].done:
	case <-time.After(30 * time.Second):
		t.Fatal("slave 1 did not exit within 30s of SIGTERM")
	}
	if code := slaves[1].cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("slave 1 exited %d after SIGTERM, want 0", code)
	}
	// Deregistered on the way out: gone from the table without waiting for
	// its 5 s lease (the poll itself would see the lease lapse only later).
	reg := f.env.liveIDs(t)
	if fmt.Sprint(reg) != "[0 2]" {
		t.Errorf("live slaves right after slave 1 exited: %v, want [0 2]", reg)
	}
	f.finish(t)
}
