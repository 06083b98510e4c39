package bench

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
)

// The tests in this file start real crawler processes (the binary built
// from cmd/crawler) against a redis-server of their own, so that Redis's
// statistics hold their traffic alone.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
)

// crawlerBinary builds cmd/crawler once for the tests of this package.
func crawlerBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bench-crawler-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "crawler")
		cmd := exec.Command("go", "build", "-o", binPath, "../../../crawler")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build the crawler: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// freeAddr is a loopback address no one listens on now, for a process
// that takes its listen address as a flag.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// ownRedis starts a redis-server for the test; a missing redis-server
// fails the test.
func ownRedis(t *testing.T) (string, *redis.Client) {
	t.Helper()
	s, err := StartRedis(context.Background(), "redis-server")
	if err != nil {
		t.Fatalf("start a redis-server of the test's own (install redis-server): %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	rdb, err := DialRedis(context.Background(), s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return s.URL(), rdb
}

func TestRedisMeter(t *testing.T) {
	ctx := context.Background()
	url, _ := ownRedis(t)
	names := newScriptNames()
	meter, err := newRedisMeter(url, names)
	if err != nil {
		t.Fatal(err)
	}
	defer meter.rdb.Close()
	opts, _ := redis.ParseURL(url)
	tap, err := newTap(opts.Addr, names)
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	other := redis.NewClient(&redis.Options{Addr: tap.Addr()})
	defer other.Close()
	other.Ping(ctx) // connect before measuring

	before, err := meter.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tapBefore := tap.Counts()
	for range 10 {
		other.Set(ctx, "k", "v", 0)
	}
	script := redis.NewScript("-- Probe.Three: three inner calls\nredis.call('GET', KEYS[1]); redis.call('GET', KEYS[1]); return redis.call('GET', KEYS[1])")
	if err := script.Run(ctx, other, []string{"k"}).Err(); err != nil {
		t.Fatal(err)
	}
	for range 5 { // the benchmark's own polls, to be taken out
		meter.rdb.HGet(ctx, "h", "f")
		meter.rdb.Get(ctx, "k")
	}
	after, err := meter.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := after.since(before)
	sent := tap.Counts().Sub(tapBefore)
	scriptCalls := got.Commands["evalsha"].Calls + got.Commands["eval"].Calls
	if got.Commands["set"].Calls != 10 || got.Commands["get"].Calls != 3 || got.Commands["hget"].Calls != 0 ||
		got.Commands["info"].Calls != 0 || scriptCalls != sent.Commands["script Probe.Three"] {
		t.Errorf("Redis's calls, the meter's own taken out = %v; sent through the tap = %v", got.Commands, sent.Commands)
	}
	if got.Calls()-sent.Sent() != 3 {
		t.Errorf("inner calls = %d - %d, want the script's 3", got.Calls(), sent.Sent())
	}
}

func TestCrawl(t *testing.T) {
	bin := crawlerBinary(t)
	url, rdb := ownRedis(t)
	opts := DefaultCrawlOptions()
	opts.Binary, opts.RedisURL, opts.Details, opts.Slaves = bin, url, 120, []int{1, 2}
	opts.Hosts, opts.Concurrency, opts.Timeout = 3, 8, 2*time.Minute
	results, err := Crawl(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want one per cluster size", len(results))
	}
	for _, r := range results {
		sent := r.MasterTap.Sent() + r.SlavesTap.Sent()
		switch {
		case r.Pages != 120 || r.Details != 120:
			t.Errorf("%d slaves: %d of %d pages stored, want every one", r.Slaves, r.Pages, r.Details)
		case r.Redis.Calls() == 0 || r.Redis.CPU <= 0 || r.SlavesCPU <= 0 || r.SlavePeakRSS < 1<<20:
			t.Errorf("%d slaves: nothing measured: %+v", r.Slaves, r)
		case !r.Tapped || r.SlavesTap.RoundTrips == 0 || r.MasterTap.RoundTrips == 0:
			t.Errorf("%d slaves: the taps counted no round trips", r.Slaves)
		case sent > r.Redis.Calls() || r.MasterTap.RoundTrips+r.SlavesTap.RoundTrips > sent:
			t.Errorf("%d slaves: %d round trips, %d sent, %d Redis calls: want trips <= sent <= calls",
				r.Slaves, r.MasterTap.RoundTrips+r.SlavesTap.RoundTrips, sent, r.Redis.Calls())
		case r.SlavesTap.Commands["script Ledger.Ack"] == 0:
			t.Errorf("%d slaves: no acknowledgement named among %v", r.Slaves, r.SlavesTap.Commands)
		}
	}
	if keys, err := rdb.Keys(context.Background(), "*bench-*").Result(); err != nil || len(keys) > 0 {
		t.Errorf("keys left behind: %v, %v", keys, err)
	}
	var md bytes.Buffer
	if err := WriteCrawl(&md, FormatMarkdown, opts, results); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| slaves | pages |", "\n| 2 | 120 |", "| evalsha |", "| slaves | script Ledger.Ack |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown tables lack %q:\n%s", want, md.String())
		}
	}
}

func TestIdle(t *testing.T) {
	bin := crawlerBinary(t)
	url, _ := ownRedis(t)
	opts := DefaultIdleOptions()
	// a heartbeat goes out every lease/3 (5 s / 3): 4 s holds at least two
	opts.Binary, opts.RedisURL, opts.Slaves, opts.Duration = bin, url, 1, 4*time.Second
	results, err := Idle(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[1].Phase != "after a finished job" {
		t.Fatalf("results = %+v, want two phases", results)
	}
	for _, r := range results {
		if r.Nodes != 2 || r.Elapsed < opts.Duration || r.Redis.Calls() == 0 || r.Slaves.Tap.Commands["script Registry.Heartbeat"] == 0 {
			t.Errorf("%s: %d nodes over %v, %d Redis calls, slaves sent %v: want a heartbeat counted",
				r.Phase, r.Nodes, r.Elapsed, r.Redis.Calls(), r.Slaves.Tap.Commands)
		}
	}
}

func TestMemory(t *testing.T) {
	bin := crawlerBinary(t)
	url, _ := ownRedis(t)
	opts := DefaultMemoryOptions()
	opts.Binary, opts.RedisURL, opts.Concurrency, opts.PageBytes, opts.Pages = bin, url, 8, 256<<10, 16
	opts.Latency, opts.Limit = 100*time.Millisecond, 4<<30
	res, err := Memory(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Crawl.Pages != 16 || !res.Passed() || res.Crawl.SlavePeakRSS < 1<<20 {
		t.Errorf("memory check = %d pages, peak %d bytes, passed %v", res.Crawl.Pages, res.Crawl.SlavePeakRSS, res.Passed())
	}
	res.Opts.Limit = 1 << 20
	if res.Passed() {
		t.Errorf("a slave of %d bytes passed a 1 MiB limit", res.Crawl.SlavePeakRSS)
	}
}

func TestReport(t *testing.T) {
	bin := crawlerBinary(t)
	opts := QuickReportOptions()
	opts.Binary, opts.DedupN, opts.Assign.Keys = bin, []int{2000}, 20_000
	opts.Dedup.Duration = 200 * time.Millisecond
	opts.Crawls = opts.Crawls[:1]
	opts.Crawls[0].Details, opts.Crawls[0].Slaves, opts.Crawls[0].Hosts = 60, []int{1}, 2
	opts.Idle.Slaves, opts.Idle.Duration, opts.Idle.AfterJob = 1, time.Second, false
	opts.Memory.Concurrency, opts.Memory.PageBytes, opts.Memory.Pages, opts.Memory.Latency = 4, 64<<10, 8, 50*time.Millisecond
	opts.Site.Details, opts.Site.PerPage, opts.Site.Stall, opts.Site.PeerDir = 60, 10, 100*time.Millisecond, "../../peers/colly"
	opts.Priority.High, opts.Priority.Low, opts.Priority.Latency = 20, 80, 20*time.Millisecond
	h := &opts.Hosts[0]
	h.Hosts, h.Slaves, h.DetailsPerHost, h.ListPages, h.Latency = []int{2}, []int{1}, 10, 2, 20*time.Millisecond
	var doc bytes.Buffer
	if err := Report(context.Background(), &doc, opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Benchmarks", "## Machine", "| cores |", "| Redis | 7.", "## Goals",
		"## One site, beside colly", "| colly v2, Parallelism 16 | ", "| 1 master + 3 slaves | ",
		"| every crawler stores the same pages, one site at 0s | within 1% | 0.00% off at worst | yes |",
		"| file only | ", "| file + postgres:// | ", "| file + kafka:// | ", "| file + s3:// | ", "| file + warc: | ",
		"| Redis CPU per stored page, 0s latency, 2 hosts | ≤ 0.050 ms |", "## Dupefilter, 2k fingerprints",
		"crawler-bench dedup --n 2000 --batch 1000 --duration 200ms --redis-server redis-server --format md",
		"## Assigner", "## Crawl, 0s latency, 2 hosts, slaves 1", "crawler-bench crawl --slaves 1 ", "## Idle cluster",
		"crawler-bench idle --slaves 1 --duration 1s --after-job=false", "## Memory", "| 4 | 64 KiB |",
		"## Rendering beside plain fetches", "crawler-bench render --pages 5 --tabs 1 --browser chromium",
		"## Priorities: high-priority pages first", "crawler-bench priority --high 20 --low 80 --lists 10 --priority 5 --latency 20ms",
		"| mixed job (two kinds) | on (5 and 0) | ", "| two jobs | off (all 0) | ",
		"| fetch | 1 | 5 |", "| render | 1 | 5 |", "## Many hosts on the job file's defaults",
		"crawler-bench hosts --hosts 2 --slaves 1 --details-per-host 10 --list-pages 2 --latency 20ms --fault-every 50 --rounds 1 --redis-server redis-server --format md",
		"| no host above the cap in flight, H = 2, 1 slave | ≤ 8 |"} {
		if !strings.Contains(doc.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", doc.String())
	}
}

// scrapeRedisCounts sums a process's own count of its Redis round trips
// and commands (its go-redis metrics hook) from its /metrics.
func scrapeRedisCounts(t *testing.T, addr string) (trips, sent float64) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		switch {
		case strings.HasPrefix(f[0], "crawler_redis_roundtrip_seconds_count"):
			trips += v
		case strings.HasPrefix(f[0], "crawler_redis_commands_total"):
			sent += v
		}
	}
	return trips, sent
}

// TestTap_agreesWithTheProcesses checks the taps' counts against the
// processes' own: started with --metrics, each counts its round trips and
// commands with a go-redis hook.
func TestTap_agreesWithTheProcesses(t *testing.T) {
	bin := crawlerBinary(t)
	url, _ := ownRedis(t)
	ctx := context.Background()
	meter, err := newRedisMeter(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer meter.rdb.Close()
	cl, err := newCrawlCluster(bin, url, "", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.stop()
	addrs := map[string]string{}
	for _, name := range []string{"master", "slave-0"} {
		addrs[name] = freeAddr(t)
	}
	if err := cl.start("master", "master", cl.storeFlag("master"), "--metrics", addrs["master"]); err != nil {
		t.Fatal(err)
	}
	if err := cl.start("slave-0", "slave", "--id", "0", cl.storeFlag("slave-0"), "--metrics", addrs["slave-0"]); err != nil {
		t.Fatal(err)
	}
	if err := cl.waitSlaves(ctx, meter.rdb, 1); err != nil {
		t.Fatal(err)
	}
	// A slave registers before the master has bound its listener (the
	// master opens its store first): each process is ready when it answers.
	for name, addr := range addrs {
		testenv.Eventually(t, 2*time.Minute, name+" serving /metrics", func() bool {
			resp, err := http.Get("http://" + addr + "/metrics")
			if err == nil {
				resp.Body.Close()
			}
			return err == nil
		})
	}
	sites, err := serveHosts(2, demosite.Options{Details: 300, GoneEvery: -1, FlakyEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sites.Close()
	// The tap is read just before and just after the processes' own
	// counts, so each count must lie between the two readings (give or
	// take the command in flight as it is read): a tick of the master's
	// that falls between them moves the tap and the process alike.
	sample := func() clusterSample {
		s, err := cl.sample()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	read := func() (tapFirst clusterSample, hooks map[string][2]float64, tapLast clusterSample) {
		tapFirst = sample()
		hooks = map[string][2]float64{}
		for name, addr := range addrs {
			trips, sent := scrapeRedisCounts(t, addr)
			hooks[name] = [2]float64{trips, sent}
		}
		return tapFirst, hooks, sample()
	}
	firstBefore, hookBefore, lastBefore := read()
	job := demosite.Job{Name: "agree", Seeds: sites.seeds(true), AllowedDomains: sites.hosts,
		PerHostRPS: jobspec.MaxPerHostRPS, PerHostConcurrency: jobspec.MaxPerHostInFlight, Capacity: 100_000}
	if _, err := measureCrawl(ctx, meter, cl, job.Name, job.YAML()); err != nil {
		t.Fatal(err)
	}
	firstAfter, hookAfter, lastAfter := read()
	least, most := firstAfter.since(lastBefore), lastAfter.since(firstBefore)
	within := func(n float64, lo, hi int64) bool { return n >= float64(lo)-1 && n <= float64(hi)+1 }
	for name := range addrs {
		lo, hi := least[name].Tap, most[name].Tap
		trips, sent := hookAfter[name][0]-hookBefore[name][0], hookAfter[name][1]-hookBefore[name][1]
		if !within(trips, lo.RoundTrips, hi.RoundTrips) || !within(sent, lo.Sent(), hi.Sent()) || trips < 10 {
			t.Errorf("%s: the tap counted %d-%d round trips and %d-%d commands, the process %.0f and %.0f",
				name, lo.RoundTrips, hi.RoundTrips, lo.Sent(), hi.Sent(), trips, sent)
		}
	}
}

// TestRoundTrips: the three ways are sent, each call as many times as
// said (counted by Redis), and each costs Redis some CPU.
func TestRoundTrips(t *testing.T) {
	url, rdb := ownRedis(t)
	ways, err := RoundTrips(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	if len(ways) != 3 {
		t.Fatalf("%d ways, want 3", len(ways))
	}
	sent := 0
	for _, w := range ways {
		if w.CPU <= 0 {
			t.Errorf("%s: Redis CPU per call %v", w.Name, w.CPU)
		}
		sent += w.Calls
	}
	st, err := readRedisStats(context.Background(), rdb)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Commands["evalsha"].Calls; got != int64(sent) {
		t.Errorf("Redis ran %d EVALSHAs, want the %d sent", got, sent)
	}
	if tbl := RoundTripTable(ways); len(tbl.Rows) != 3 {
		t.Errorf("table of %d rows", len(tbl.Rows))
	}
}
