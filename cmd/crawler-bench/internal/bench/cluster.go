package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
)

// crawlCluster is a benchmark's crawler processes, the built binary run
// as one master and its slaves, each connected to Redis through a tap of
// its own when taps are on.
type crawlCluster struct {
	binary   string
	redisURL string
	prefix   string
	mongoURI string
	dir      string
	taps     bool
	scripts  *scriptNames
	procs    []*process
	// profileDir, when set, gets a CPU profile of each process's run.
	profileDir string
	exited     chan struct{} // closed when the first process exits
	exitOnce   sync.Once
}

// process is one crawler process of the cluster.
type process struct {
	name    string // "master", "slave-3"
	cmd     *exec.Cmd
	tap     *Tap // nil without taps
	logPath string
	done    chan struct{}
}

// newCrawlCluster prepares a cluster under a fresh key prefix; taps are
// used when asked for and the URL is a plain redis:// one (a tap cannot
// follow a Redis Cluster's redirects nor read TLS).
func newCrawlCluster(binary, redisURL, mongoURI string, taps bool, scripts *scriptNames) (*crawlCluster, error) {
	dir, err := os.MkdirTemp("", "crawler-bench")
	if err != nil {
		return nil, err
	}
	return &crawlCluster{binary: binary, redisURL: redisURL, mongoURI: mongoURI, dir: dir,
		taps: taps && tappable(redisURL), scripts: cmp.Or(scripts, newScriptNames()), exited: make(chan struct{}),
		prefix: "bench-" + strconv.FormatInt(time.Now().UnixNano(), 36)}, nil
}

// tappable reports whether processes can reach the Redis of u through a tap.
func tappable(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.Scheme == "redis" && !strings.Contains(p.Host, ",")
}

// Keys are the cluster's Redis keys.
func (c *crawlCluster) Keys() cluster.Keys { return cluster.Keys{Prefix: c.prefix} }

// Tapped reports whether the processes run through taps.
func (c *crawlCluster) Tapped() bool { return c.taps }

// startMaster starts the master.
func (c *crawlCluster) startMaster() error {
	return c.start("master", "master", c.storeFlag("master"))
}

// startSlaves starts n slaves of the given concurrency.
func (c *crawlCluster) startSlaves(n, concurrency int) error {
	for i := range n {
		name := "slave-" + strconv.Itoa(i)
		if err := c.start(name, "slave", "--id", strconv.Itoa(i), "--concurrency", strconv.Itoa(concurrency),
			c.storeFlag(name)); err != nil {
			return err
		}
	}
	return nil
}

// storeFlag is a process's store: MongoDB when configured, else a JSON
// Lines file of its own.
func (c *crawlCluster) storeFlag(name string) string {
	if c.mongoURI != "" {
		return "--mongo=" + c.mongoURI
	}
	return "--output=" + filepath.Join(c.dir, name+".jsonl")
}

func (c *crawlCluster) start(name string, args ...string) error {
	p := &process{name: name, logPath: filepath.Join(c.dir, name+".log"), done: make(chan struct{})}
	redisURL := c.redisURL
	if c.taps {
		u, _ := url.Parse(c.redisURL)
		tap, err := newTap(u.Host, c.scripts)
		if err != nil {
			return err
		}
		p.tap = tap
		u.Host = tap.Addr()
		redisURL = u.String()
	}
	args = append(args, "--redis", redisURL, "--prefix", c.prefix, "--log-level", "warn")
	if c.profileDir != "" {
		args = append(args, "--cpu-profile", filepath.Join(c.profileDir, name+".pprof"))
	}
	logf, err := os.Create(p.logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	p.cmd = exec.Command(c.binary, args...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.Env = childEnv()
	if err := p.cmd.Start(); err != nil {
		if p.tap != nil {
			_ = p.tap.Close()
		}
		return fmt.Errorf("start %s: %w", name, err)
	}
	c.procs = append(c.procs, p)
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
		c.exitOnce.Do(func() { close(c.exited) })
	}()
	return nil
}

// childEnv is this process's environment without CRAWLER_* variables, so
// that a setting of the user's shell does not change what is measured.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CRAWLER_") {
			env = append(env, kv)
		}
	}
	return env
}

// waitSlaves waits until n slaves are live, failing at once if a process
// exits.
func (c *crawlCluster) waitSlaves(ctx context.Context, rdb redis.UniversalClient, n int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-c.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	cl, err := client.New(rdb, client.Options{Keys: c.Keys()})
	if err == nil {
		err = cl.WaitSlaves(ctx, n)
	}
	if exitErr := c.exitError(); exitErr != nil {
		return exitErr
	}
	return err
}

// exitError describes the first process that exited, with the end of its
// log, or is nil while all run.
func (c *crawlCluster) exitError() error {
	for _, p := range c.procs {
		select {
		case <-p.done:
			raw, _ := os.ReadFile(p.logPath)
			lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
			return fmt.Errorf("%s exited (%v): %s", p.name, p.cmd.ProcessState,
				strings.Join(lines[max(0, len(lines)-5):], "\n"))
		default:
		}
	}
	return nil
}

// clusterSample is a reading of every process's CPU time and tap.
type clusterSample map[string]processSample

// processSample is one process's reading.
type processSample struct {
	CPU time.Duration
	Tap TapCounts
}

// sample reads every process's CPU time and tap counts.
func (c *crawlCluster) sample() (clusterSample, error) {
	out := clusterSample{}
	for _, p := range c.procs {
		cpu, err := procCPU(p.cmd.Process.Pid)
		if err != nil {
			return nil, err
		}
		s := processSample{CPU: cpu}
		if p.tap != nil {
			s.Tap = p.tap.Counts()
		}
		out[p.name] = s
	}
	return out, nil
}

// since returns the change of every process's reading.
func (s clusterSample) since(earlier clusterSample) clusterSample {
	out := clusterSample{}
	for name, v := range s {
		e := earlier[name]
		out[name] = processSample{CPU: v.CPU - e.CPU, Tap: v.Tap.Sub(e.Tap)}
	}
	return out
}

// role sums the readings of the master ("master") or of the slaves
// ("slave").
func (s clusterSample) role(role string) processSample {
	sum := processSample{Tap: TapCounts{Commands: map[string]int64{}}}
	for name, v := range s {
		if strings.HasPrefix(name, role) {
			sum.CPU += v.CPU
			sum.Tap = sum.Tap.Add(v.Tap)
		}
	}
	return sum
}

// peakRSS is the peak resident set of the master and the largest of the
// slaves', in bytes; read before stop.
func (c *crawlCluster) peakRSS() (master, slave int64, err error) {
	for _, p := range c.procs {
		rss, err := procPeakRSS(p.cmd.Process.Pid)
		if err != nil {
			return 0, 0, err
		}
		if p.name == "master" {
			master = rss
		} else {
			slave = max(slave, rss)
		}
	}
	return master, slave, nil
}

// stop ends the processes (SIGTERM, then SIGKILL after 10 seconds),
// closes the taps and removes the working directory.
func (c *crawlCluster) stop() error {
	for _, p := range c.procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	var errs []error
	for _, p := range c.procs {
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
			errs = append(errs, fmt.Errorf("%s killed after 10s", p.name))
		}
		if p.tap != nil {
			_ = p.tap.Close()
		}
	}
	c.procs = nil
	errs = append(errs, os.RemoveAll(c.dir))
	return errors.Join(errs...)
}

// deletePrefix removes every key of the cluster's prefix.
func deletePrefix(ctx context.Context, rdb redis.UniversalClient, prefix string) {
	iter := rdb.Scan(ctx, 0, "*"+prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		rdb.Unlink(ctx, iter.Val())
	}
}
