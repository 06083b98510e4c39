package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/demosite"
)

// CrawlOptions configures the crawl benchmark.
type CrawlOptions struct {
	// Binary is the crawler executable to start as master and slaves.
	Binary string
	// RedisURL is the Redis the cluster meets in.
	RedisURL string
	// Details is the number of detail pages on the loopback site.
	Details int
	// Slaves lists the cluster sizes to measure, e.g. 1 and 3.
	Slaves []int
	// Concurrency is each slave's --concurrency.
	Concurrency int
	// Timeout bounds one crawl.
	Timeout time.Duration
	// MongoURI, when set, makes the processes store to MongoDB instead of
	// JSON Lines files.
	MongoURI string
}

// Validate reports the first bad option, naming its flag.
func (o CrawlOptions) Validate() error {
	switch {
	case o.Binary == "":
		return errors.New("bench crawl: no crawler binary")
	case o.Details < 1:
		return fmt.Errorf("--details: %d must be at least 1", o.Details)
	case len(o.Slaves) == 0:
		return errors.New("--slaves: at least one cluster size is required")
	case o.Concurrency < 1:
		return fmt.Errorf("--concurrency: %d must be at least 1", o.Concurrency)
	}
	for _, n := range o.Slaves {
		if n < 1 || n > cluster.DefaultMaxSlaves {
			return fmt.Errorf("--slaves: %d is outside 1..%d", n, cluster.DefaultMaxSlaves)
		}
	}
	return nil
}

// CrawlResult is one measured crawl.
type CrawlResult struct {
	Slaves     int
	Pages      int64         // detail pages stored
	ListPages  int64         // list pages fetched
	Wall       time.Duration // from submit to finished
	MasterCPU  time.Duration // user+system CPU of the master process
	SlavesCPU  time.Duration // user+system CPU of all slave processes
	SiteServed int           // requests the site answered
}

// PagesPerSecond is the crawl's throughput.
func (r CrawlResult) PagesPerSecond() float64 { return float64(r.Pages) / r.Wall.Seconds() }

// Crawl crawls a loopback demo site once per cluster size with real master
// and slave processes, and measures throughput and CPU time per page.
func Crawl(ctx context.Context, opts CrawlOptions) ([]CrawlResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var out []CrawlResult
	for _, n := range opts.Slaves {
		r, err := crawlOnce(ctx, opts, n)
		if err != nil {
			return out, fmt.Errorf("crawl with %d slaves: %w", n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// crawlRun is one benchmark crawl's cluster.
type crawlRun struct {
	opts   CrawlOptions
	prefix string
	dir    string
	procs  []*exec.Cmd
}

func crawlOnce(ctx context.Context, opts CrawlOptions, slaves int) (CrawlResult, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	ropts, err := redis.ParseURL(opts.RedisURL)
	if err != nil {
		return CrawlResult{}, fmt.Errorf("--redis: %w", err)
	}
	rdb := redis.NewClient(ropts)
	defer rdb.Close()
	dir, err := os.MkdirTemp("", "crawler-bench")
	if err != nil {
		return CrawlResult{}, err
	}
	defer os.RemoveAll(dir)
	run := &crawlRun{opts: opts, prefix: "bench-crawl-" + strconv.FormatInt(time.Now().UnixNano(), 36), dir: dir}
	defer deletePrefix(context.Background(), rdb, run.prefix)
	defer run.stop()

	site := demosite.New(demosite.Options{Details: opts.Details, GoneEvery: -1, FlakyEvery: -1})
	base, closeSite, err := serve(site)
	if err != nil {
		return CrawlResult{}, err
	}
	defer closeSite()
	if err := run.startCluster(ctx, rdb, slaves); err != nil {
		return CrawlResult{}, err
	}
	spec, err := cluster.ParseJobSpec(strings.NewReader(demosite.JobYAML("bench", base)))
	if err != nil {
		return CrawlResult{}, err
	}
	keys := cluster.Keys{Prefix: run.prefix}
	start := time.Now()
	if err := client.Submit(ctx, rdb, keys, spec); err != nil {
		return CrawlResult{}, err
	}
	st, err := client.Wait(ctx, rdb, keys, "bench", cluster.DefaultMaxSlaves, 20*time.Millisecond, nil)
	if err != nil {
		return CrawlResult{}, err
	}
	wall := time.Since(start)
	master, slavesCPU := run.stop()
	return CrawlResult{Slaves: slaves, Pages: st.Counters.Stored, ListPages: st.Counters.ListPages, Wall: wall,
		MasterCPU: master, SlavesCPU: slavesCPU}, nil
}

// startCluster starts the master and slaves and waits until the slaves are live.
func (r *crawlRun) startCluster(ctx context.Context, rdb *redis.Client, slaves int) error {
	common := []string{"--redis", r.opts.RedisURL, "--prefix", r.prefix, "--log-level", "warn"}
	if err := r.start(append([]string{"master", r.storeFlag("master")}, common...)); err != nil {
		return err
	}
	for i := 0; i < slaves; i++ {
		args := append([]string{"slave", "--id", strconv.Itoa(i), "--concurrency", strconv.Itoa(r.opts.Concurrency),
			r.storeFlag(fmt.Sprintf("slave-%d", i))}, common...)
		if err := r.start(args); err != nil {
			return err
		}
	}
	return client.WaitSlaves(ctx, rdb, cluster.Keys{Prefix: r.prefix}, slaves)
}

// storeFlag is the process's store: MongoDB when configured, else a JSON
// Lines file of its own.
func (r *crawlRun) storeFlag(name string) string {
	if r.opts.MongoURI != "" {
		return "--mongo=" + r.opts.MongoURI
	}
	return "--output=" + filepath.Join(r.dir, name+".jsonl")
}

func (r *crawlRun) start(args []string) error {
	cmd := exec.Command(r.opts.Binary, args...)
	logf, err := os.Create(filepath.Join(r.dir, args[0]+strconv.Itoa(len(r.procs))+".log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", args[0], err)
	}
	r.procs = append(r.procs, cmd)
	return nil
}

// stop ends the processes (SIGTERM, then SIGKILL after 10s) and returns the
// CPU time of the master (the first process) and of the slaves together.
func (r *crawlRun) stop() (master, slaves time.Duration) {
	for _, p := range r.procs {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
	for i, p := range r.procs {
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Process.Kill()
			<-done
		}
		cpu := p.ProcessState.UserTime() + p.ProcessState.SystemTime()
		if i == 0 {
			master = cpu
		} else {
			slaves += cpu
		}
	}
	r.procs = nil
	return master, slaves
}

// serve serves h on a loopback port.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// deletePrefix removes the benchmark's keys.
func deletePrefix(ctx context.Context, rdb *redis.Client, prefix string) {
	iter := rdb.Scan(ctx, 0, "*"+prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		rdb.Unlink(ctx, iter.Val())
	}
}

// WriteCrawl prints the results as a table.
func WriteCrawl(w io.Writer, opts CrawlOptions, results []CrawlResult) error {
	st := "JSON Lines files"
	if opts.MongoURI != "" {
		st = "MongoDB"
	}
	fmt.Fprintf(w, "crawl of a loopback demo site: %d detail pages, slave concurrency %d, real master and slave processes, items to %s\n\n",
		opts.Details, opts.Concurrency, st)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "slaves\tpages\tlist pages\twall\tpages/s\tmaster CPU/page\tslaves CPU/page\tCPU/page total")
	for _, r := range results {
		per := func(d time.Duration) string {
			return fmt.Sprintf("%.0f µs", float64(d.Microseconds())/float64(max(r.Pages, 1)))
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%.0f\t%s\t%s\t%s\n", r.Slaves, r.Pages, r.ListPages,
			r.Wall.Round(time.Millisecond), r.PagesPerSecond(), per(r.MasterCPU), per(r.SlavesCPU), per(r.MasterCPU+r.SlavesCPU))
	}
	return tw.Flush()
}
