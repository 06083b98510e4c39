package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crawler-dev/crawler/internal/redisserver"
)

// siteEnv is what the one-site benchmark's crawls share: the cluster's
// Redis, the colly peer's binary and a working directory.
type siteEnv struct {
	opts  SiteOptions
	dir   string
	colly string // the built peer
	redis *redisserver.Server
	// scripts names the scripts the taps saw loaded, across the rounds
	// (a later round's processes find them loaded and only call them).
	scripts *scriptNames
	// sinks are the servers of the sink crawlers.
	sinks sinkServers
}

func newSiteEnv(ctx context.Context, opts SiteOptions) (*siteEnv, error) {
	dir, err := os.MkdirTemp("", "crawler-bench-site")
	if err != nil {
		return nil, err
	}
	env := &siteEnv{opts: opts, dir: dir, scripts: newScriptNames()}
	if err := env.prepare(ctx); err != nil {
		env.close()
		return nil, err
	}
	return env, nil
}

// prepare builds the colly peer and starts the cluster's Redis, for the
// crawlers that need them.
func (e *siteEnv) prepare(ctx context.Context) error {
	for _, c := range e.opts.Crawlers {
		switch {
		case c == CrawlerColly && e.colly == "":
			exe, err := BuildPeer(ctx, e.opts.PeerDir, filepath.Join(e.dir, "colly-peer"))
			if err != nil {
				return err
			}
			e.colly = exe
		case c == CrawlerCluster && e.redis == nil:
			s, err := StartRedis(ctx, e.opts.RedisServer)
			if err != nil {
				return err
			}
			e.redis = s
		case sinkSchemes[c] != "":
			if err := e.startSink(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// BuildPeer builds the Go module in dir (a peer crawler) into exe.
func BuildPeer(ctx context.Context, dir, exe string) (string, error) {
	abs, err := filepath.Abs(exe)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", abs, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the peer in %s: %w: %s", dir, err, bytes.TrimSpace(out))
	}
	return abs, nil
}

func (e *siteEnv) close() {
	if e.redis != nil {
		_ = e.redis.Close()
	}
	e.sinks.close()
	_ = os.RemoveAll(e.dir)
}

// crawlOne crawls a fresh site (its faults not yet spent) with one crawler.
func (e *siteEnv) crawl(ctx context.Context, name string, latency time.Duration) (SiteRun, error) {
	site, err := serveSite(e.opts.siteOptions(latency))
	if err != nil {
		return SiteRun{}, err
	}
	defer site.srv.Close()
	dir, err := os.MkdirTemp(e.dir, name)
	if err != nil {
		return SiteRun{}, err
	}
	defer os.RemoveAll(dir)
	profiles, err := e.profileDir(dir)
	if err != nil {
		return SiteRun{}, err
	}
	var run SiteRun
	switch name {
	case CrawlerCluster:
		run, err = e.crawlCluster(ctx, site, profiles)
	case CrawlerRun:
		run, err = e.crawlRun(ctx, site, dir, profileFlag(profiles)...)
	case CrawlerColly:
		run, err = e.crawlColly(ctx, site, dir)
	default:
		run, err = e.crawlRunSink(ctx, name, site, dir)
	}
	run.Crawler, run.Latency, run.Requests, run.Expected = name, latency, site.requests.Load(), site.expected()
	run.SiteBusy, run.SitePeak = time.Duration(site.busy.Load()), site.peak.Load()
	if err == nil && profiles != "" && (name == CrawlerCluster || name == CrawlerRun) {
		run.Stages, err = dirStages(profiles)
	}
	return run, err
}

// profileDir makes the directory a crawl's processes write their CPU
// profiles to with Stages ("" without).
func (e *siteEnv) profileDir(crawlDir string) (string, error) {
	if !e.opts.Stages {
		return "", nil
	}
	dir := filepath.Join(crawlDir, "profiles")
	return dir, os.Mkdir(dir, 0o755)
}

// profileFlag is `crawler run`'s --cpu-profile into dir (none for "").
func profileFlag(dir string) []string {
	if dir == "" {
		return nil
	}
	return []string{"--cpu-profile", filepath.Join(dir, "run.pprof")}
}

// crawlCluster crawls with a master and slaves on the benchmark's Redis.
func (e *siteEnv) crawlCluster(ctx context.Context, site *countingSite, profileDir string) (SiteRun, error) {
	opts := DefaultCrawlOptions()
	opts.Binary, opts.RedisURL, opts.Tap, opts.Timeout, opts.scripts = e.opts.Binary, e.redis.URL(), e.opts.Tap, e.opts.Timeout, e.scripts
	opts.profileDir = profileDir
	job := site.job()
	job.PerHostRPS, job.PerHostConcurrency = e.opts.PerHostRPS, e.opts.PerHostConcurrency
	res, err := crawlJob(ctx, opts, e.opts.Slaves, job.Name, job.YAML())
	var detail *CrawlResult
	if e.opts.Tap {
		detail = &res
	}
	return SiteRun{Detail: detail, Stored: res.Pages, Failed: res.Failed, ListPages: res.ListPages, Wall: res.Wall,
		CrawlerCPU: res.CrawlerCPU(), RedisCPU: res.Redis.CPU, RedisCalls: res.Redis.Calls(),
		PeakRSS: max(res.MasterPeakRSS, res.SlavePeakRSS)}, err
}

// crawlRun crawls with `crawler run` on its defaults (its own Redis, 3
// slaves of concurrency 16), items to a JSON Lines file, with more flags
// (a --sink).
func (e *siteEnv) crawlRun(ctx context.Context, site *countingSite, dir string, more ...string) (SiteRun, error) {
	job, err := site.writeJob(dir, e.opts)
	if err != nil {
		return SiteRun{}, err
	}
	items := filepath.Join(dir, "items.jsonl")
	p, err := runChild(ctx, e.opts.Timeout, e.opts.Binary, append([]string{"run", "--job", job, "-o", items, "--quiet"}, more...)...)
	run := SiteRun{Wall: p.wall, CrawlerCPU: p.cpu - p.childCPU, RedisCPU: p.childCPU, RedisCalls: -1, PeakRSS: p.peakRSS}
	if err != nil {
		return run, err
	}
	run.Redis = summaryLine(p.stdout, "redis:")
	run.Stored, err = countLines(items)
	run.Failed, run.ListPages = numberAfter(p.stdout, "+ failed "), numberAfter(p.stdout, "list pages ")
	if _, sinkLine, ok := strings.Cut(p.stdout, "\nsink "); ok {
		run.SinkAccepted = numberAfter(sinkLine, ": accepted ")
	}
	return run, err
}

// crawlColly crawls with the colly peer.
func (e *siteEnv) crawlColly(ctx context.Context, site *countingSite, dir string) (SiteRun, error) {
	p, err := runChild(ctx, e.opts.Timeout, e.colly, "-seed", site.base+"/list/1",
		"-parallelism", strconv.Itoa(e.opts.PerHostConcurrency), "-retries", "2", "-o", filepath.Join(dir, "items.jsonl"))
	run := SiteRun{Wall: p.wall, CrawlerCPU: p.cpu, RedisCalls: -1, PeakRSS: p.peakRSS}
	if err != nil {
		return run, err
	}
	var n struct{ Stored, Failed, ListPages int64 }
	if err := json.Unmarshal([]byte(p.stdout), &n); err != nil {
		return run, fmt.Errorf("colly peer's counts %q: %w", p.stdout, err)
	}
	run.Stored, run.Failed, run.ListPages = n.Stored, n.Failed, n.ListPages
	return run, nil
}

// childProcess is what a crawler run as one child process did.
type childProcess struct {
	stdout string
	wall   time.Duration
	// cpu is the process's CPU with that of the children it waited for;
	// childCPU is its children's (a redis-server) as last seen running.
	cpu, childCPU time.Duration
	peakRSS       int64
}

// sampleEvery is how often a child's peak RSS and children are read.
const sampleEvery = 50 * time.Millisecond

// runChild runs exe with args until it exits, reading its peak RSS and
// its children's CPU while it runs.
func runChild(ctx context.Context, timeout time.Duration, exe string, args ...string) (childProcess, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdout, cmd.Stderr, cmd.Env = &out, &stderr, childEnv()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return childProcess{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var p childProcess
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			p.wall, p.stdout = time.Since(start), out.String()
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				p.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			if err != nil {
				return p, fmt.Errorf("%s: %w: %s", filepath.Base(exe), err, lastLines(stderr.String(), 5))
			}
			return p, nil
		case <-t.C:
			p.sample(cmd.Process.Pid)
		}
	}
}

// sample reads a running process's peak RSS and its children's CPU.
func (p *childProcess) sample(pid int) {
	if rss, err := procPeakRSS(pid); err == nil {
		p.peakRSS = max(p.peakRSS, rss)
	}
	var cpu time.Duration
	for _, c := range childPIDs(pid) {
		if d, err := procCPU(c); err == nil {
			cpu += d
		}
	}
	if cpu > 0 {
		p.childCPU = cpu
	}
}

// childPIDs are the children of every thread of process pid.
func childPIDs(pid int) []int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		for _, w := range strings.Fields(string(raw)) {
			if n, err := strconv.Atoi(w); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// summaryLine is the rest of the first line of a summary that starts
// with key (spaces before it ignored), trimmed.
func summaryLine(summary, key string) string {
	for _, line := range strings.Split(summary, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), key); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// numberAfter is the number that follows key in a summary, or 0.
func numberAfter(summary, key string) int64 {
	_, rest, ok := strings.Cut(summary, key)
	if !ok {
		return 0
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	n, _ := strconv.ParseInt(rest[:end], 10, 64)
	return n
}

// countLines counts the lines of a file.
func countLines(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		n++
	}
	return n, sc.Err()
}
