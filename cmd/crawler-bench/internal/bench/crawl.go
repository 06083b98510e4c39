package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/jobspec"
)

// Seed modes of the crawl benchmark.
const (
	// SeedsAll seeds every list page of every host, so the master's
	// breadth-first walk of list pages is not what limits the crawl.
	SeedsAll = "all"
	// SeedsFirst seeds each host's first list page: the master walks each
	// host's list pages one after another, as on a real site.
	SeedsFirst = "first"
)

// CrawlOptions configures the crawl benchmark.
type CrawlOptions struct {
	// Binary is the crawler executable to start as master and slaves.
	Binary string
	// RedisURL is the Redis the cluster meets in.
	RedisURL string
	// Details is the number of detail pages on the loopback site, used
	// when DetailsPerSlave is 0.
	Details int
	// DetailsPerSlave, when set, sizes the site to this many detail pages
	// per slave, so each cluster size crawls for about as long.
	DetailsPerSlave int
	// Slaves lists the cluster sizes to measure, e.g. 1, 2, 4 and 8.
	Slaves []int
	// Concurrency is each slave's --concurrency.
	Concurrency int
	// Hosts is the number of loopback hosts the site is spread over.
	Hosts int
	// Latency is added to every response of the site.
	Latency time.Duration
	// PageBytes pads every detail page to this size (0: about 2 KB).
	PageBytes int
	// PerPage is the detail links on each list page (0: the demo site's
	// 25). With SeedsFirst the master learns each host's next list page
	// only from the one before, so a host yields at most PerPage links per
	// list-page latency: more links per page lift that ceiling.
	PerPage int
	// Seeds is SeedsAll or SeedsFirst.
	Seeds string
	// Tap counts each process's commands and round trips on the wire, with
	// a loopback proxy in front of Redis.
	Tap bool
	// Timeout bounds one crawl.
	Timeout time.Duration
	// MongoURI, when set, makes the processes store to MongoDB instead of
	// JSON Lines files.
	MongoURI string

	// scripts names the scripts seen on the wire, kept across the runs
	// of one Redis: a script is sent in full only the first time.
	scripts *scriptNames
	// profileDir, when set, is where each process writes a CPU profile of
	// its whole run (--cpu-profile), named after the process.
	profileDir string
}

// DefaultCrawlOptions are the crawl benchmark's defaults.
func DefaultCrawlOptions() CrawlOptions {
	return CrawlOptions{RedisURL: "redis://127.0.0.1:6379/0", Details: 5000, Slaves: []int{1, 3},
		Concurrency: 32, Hosts: 1, Seeds: SeedsAll, Tap: true, Timeout: 10 * time.Minute}
}

// Validate reports the first bad option, by field.
func (o CrawlOptions) Validate() error {
	switch {
	case o.Binary == "":
		return errors.New("bench crawl: no crawler binary")
	case o.Details < 1 && o.DetailsPerSlave < 1:
		return cluster.Invalid("Details", o.Details, "must be at least 1")
	case o.DetailsPerSlave < 0:
		return cluster.Invalid("DetailsPerSlave", o.DetailsPerSlave, "must not be negative")
	case len(o.Slaves) == 0:
		return cluster.Invalid("Slaves", o.Slaves, "must name at least one cluster size")
	case o.Concurrency < 1 || o.Concurrency > 10_000:
		return cluster.Invalid("Concurrency", o.Concurrency, "is outside 1..10000")
	case o.Hosts < 1 || o.Hosts > MaxHosts:
		return cluster.Invalid("Hosts", o.Hosts, "is outside 1..%d", MaxHosts)
	case o.Latency < 0 || o.Latency > time.Minute:
		return cluster.Invalid("Latency", o.Latency, "is outside 0..1m")
	case o.PageBytes < 0 || o.PageBytes > 64<<20:
		return cluster.Invalid("PageBytes", o.PageBytes, "is outside 0..64 MiB")
	case o.PerPage < 0 || o.PerPage > 10_000:
		return cluster.Invalid("PerPage", o.PerPage, "is outside 0..10000")
	case o.Seeds != SeedsAll && o.Seeds != SeedsFirst:
		return cluster.Invalid("Seeds", o.Seeds, "is not all or first")
	case o.Timeout <= 0:
		return cluster.Invalid("Timeout", o.Timeout, "must be positive")
	}
	for _, n := range o.Slaves {
		if n < 1 || n > cluster.DefaultMaxSlaves {
			return cluster.Invalid("Slaves", n, "is outside 1..%d", cluster.DefaultMaxSlaves)
		}
	}
	return nil
}

// details is the size of the site for a cluster of n slaves.
func (o CrawlOptions) details(n int) int {
	if o.DetailsPerSlave > 0 {
		return o.DetailsPerSlave * n
	}
	return o.Details
}

// where names a crawl in the report: its latency and hosts, and its
// slaves' concurrency when it is not the default.
func (o CrawlOptions) where() string {
	s := fmt.Sprintf(", %v latency, %d hosts", o.Latency, o.Hosts)
	if o.Concurrency != DefaultCrawlOptions().Concurrency {
		s += fmt.Sprintf(", concurrency %d", o.Concurrency)
	}
	return s
}

// Args are the `crawler-bench crawl` flags that reproduce o (Redis aside).
func (o CrawlOptions) Args() []string {
	sizes := make([]string, len(o.Slaves))
	for i, n := range o.Slaves {
		sizes[i] = strconv.Itoa(n)
	}
	args := []string{"--slaves", strings.Join(sizes, ","), "--concurrency", strconv.Itoa(o.Concurrency),
		"--hosts", strconv.Itoa(o.Hosts), "--latency", o.Latency.String(), "--seeds", o.Seeds}
	if o.DetailsPerSlave > 0 {
		args = append(args, "--details-per-slave", strconv.Itoa(o.DetailsPerSlave))
	} else {
		args = append(args, "--details", strconv.Itoa(o.Details))
	}
	if o.PageBytes > 0 {
		args = append(args, "--page-bytes", strconv.Itoa(o.PageBytes))
	}
	if o.PerPage > 0 {
		args = append(args, "--per-page", strconv.Itoa(o.PerPage))
	}
	if !o.Tap {
		args = append(args, "--tap=false")
	}
	return args
}

// CrawlResult is one measured crawl. CPU times, Redis's statistics and
// tap counts cover the job: from just before it is submitted until it is
// seen finished.
type CrawlResult struct {
	Slaves    int
	Details   int           // detail pages on the site
	Pages     int64         // detail pages stored
	ListPages int64         // list pages fetched
	Failed    int64         // detail pages failed
	Wall      time.Duration // from submit to finished
	// SteadyRate is the pages stored per second between 10% and 90% of
	// the pages stored, free of the start and the tail.
	SteadyRate float64
	MasterCPU  time.Duration // user+system CPU of the master process
	SlavesCPU  time.Duration // user+system CPU of all slave processes
	BenchCPU   time.Duration // this process: the site, the taps, the polls
	// Redis is what Redis did, the benchmark's own commands taken out.
	Redis RedisStats
	// Tapped says whether MasterTap and SlavesTap were counted.
	Tapped               bool
	MasterTap, SlavesTap TapCounts
	// MasterPeakRSS and SlavePeakRSS are the peak resident sets (VmHWM)
	// of the master and of the largest slave, in bytes.
	MasterPeakRSS, SlavePeakRSS int64
	// Status is the job's status once finished: its counters, and each
	// page kind's.
	Status client.Status
	// Label names the result's column in the breakdown tables; empty
	// names it by its slaves.
	Label string
}

// PagesPerSecond is the crawl's throughput over the whole job.
func (r CrawlResult) PagesPerSecond() float64 { return float64(r.Pages) / r.Wall.Seconds() }

// PerPage divides a total by the pages stored.
func (r CrawlResult) PerPage(total float64) float64 { return total / float64(max(r.Pages, 1)) }

// CrawlerCPU is the master's and slaves' CPU time together.
func (r CrawlResult) CrawlerCPU() time.Duration { return r.MasterCPU + r.SlavesCPU }

// Crawl crawls a loopback demo site once per cluster size with real master
// and slave processes, and measures throughput and the cost per page.
func Crawl(ctx context.Context, opts CrawlOptions) ([]CrawlResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.scripts == nil {
		opts.scripts = newScriptNames()
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

// settle is how long a started cluster runs before a measurement, so that
// starting (loading scripts, registering) is not counted.
const settle = time.Second

func crawlOnce(ctx context.Context, opts CrawlOptions, slaves int) (CrawlResult, error) {
	details := opts.details(slaves)
	sites, err := serveHosts(opts.Hosts, demosite.Options{Details: details, GoneEvery: -1, FlakyEvery: -1,
		Delay: opts.Latency, PageBytes: opts.PageBytes, PerPage: opts.PerPage})
	if err != nil {
		return CrawlResult{}, err
	}
	defer sites.Close()
	job := demosite.Job{Name: "bench", Seeds: sites.seeds(opts.Seeds == SeedsAll), AllowedDomains: sites.hosts,
		PerHostRPS: jobspec.MaxPerHostRPS, PerHostConcurrency: jobspec.MaxPerHostInFlight,
		Capacity: max(100_000, 2*int64(details))}
	res, err := crawlJob(ctx, opts, slaves, job.Name, job.YAML())
	res.Details = details
	return res, err
}

// crawlJob starts a master and slaves of opts' binary on opts' Redis,
// crawls the job of that name and job file with them and measures it; the
// processes and their keys are gone when it returns.
func crawlJob(ctx context.Context, opts CrawlOptions, slaves int, name, yaml string) (res CrawlResult, err error) {
	return crawlJobThen(ctx, opts, slaves, name, yaml, nil)
}

// crawlJobThen is crawlJob, calling then, when set, once the job is
// finished and measured, with the processes' working directory (their item
// files, failure files and logs), before the processes stop and the
// directory is removed.
func crawlJobThen(ctx context.Context, opts CrawlOptions, slaves int, name, yaml string,
	then func(dir string) error) (res CrawlResult, err error) {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	meter, err := newRedisMeter(opts.RedisURL, opts.scripts)
	if err != nil {
		return res, err
	}
	defer meter.rdb.Close()
	cl, err := startCluster(ctx, meter.rdb, opts, slaves)
	if cl != nil {
		defer func() {
			err = errors.Join(err, cl.stop())
			deletePrefix(context.WithoutCancel(ctx), meter.rdb, cl.prefix)
		}()
	}
	if err != nil {
		return res, err
	}
	res, err = measureCrawl(ctx, meter, cl, name, yaml)
	res.Slaves = slaves
	if err == nil && then != nil {
		err = then(cl.dir)
	}
	return res, err
}

// newRedisMeter connects the benchmark's own client, whose commands are
// counted to be taken out of Redis's totals.
func newRedisMeter(redisURL string, scripts *scriptNames) (redisMeter, error) {
	ropts, err := redis.ParseURL(redisURL)
	if err != nil {
		return redisMeter{}, cluster.Invalid("RedisURL", "(not shown)", "is not a redis:// URL of one server: %v", err)
	}
	ropts.DisableIdentity = true // Redis before 7.2 refuses CLIENT SETINFO: no failed calls in its counts
	rdb := redis.NewClient(ropts)
	own := newOwnCommands(cmp.Or(scripts, newScriptNames()))
	rdb.AddHook(own)
	return redisMeter{rdb: rdb, own: own}, nil
}

// startCluster starts a master and n slaves and waits until the slaves are
// live and the cluster has settled. It returns the cluster, to be
// stopped, even when starting fails.
func startCluster(ctx context.Context, rdb redis.UniversalClient, opts CrawlOptions, slaves int) (*crawlCluster, error) {
	cl, err := newCrawlCluster(opts.Binary, opts.RedisURL, opts.MongoURI, opts.Tap, opts.scripts)
	if err != nil {
		return nil, err
	}
	cl.profileDir = opts.profileDir
	if err := cl.startMaster(); err != nil {
		return cl, err
	}
	if err := cl.startSlaves(slaves, opts.Concurrency); err != nil {
		return cl, err
	}
	if err := cl.waitSlaves(ctx, rdb, slaves); err != nil {
		return cl, err
	}
	return cl, sleepCtx(ctx, settle)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// jobReading is one reading of everything the crawl benchmark measures.
type jobReading struct {
	redis meterReading
	procs clusterSample
	bench time.Duration
}

func readJob(ctx context.Context, meter redisMeter, cl *crawlCluster) (jobReading, error) {
	r, err := meter.read(ctx)
	if err != nil {
		return jobReading{}, err
	}
	procs, err := cl.sample()
	if err != nil {
		return jobReading{}, err
	}
	self, err := procCPU(os.Getpid())
	return jobReading{redis: r, procs: procs, bench: self}, err
}

// measureCrawl submits the job of that name and job file, waits until it
// is finished and measures it.
func measureCrawl(ctx context.Context, meter redisMeter, cl *crawlCluster, name, yaml string) (CrawlResult, error) {
	spec, err := jobspec.Parse(strings.NewReader(yaml))
	if err != nil {
		return CrawlResult{}, err
	}
	before, err := readJob(ctx, meter, cl)
	if err != nil {
		return CrawlResult{}, err
	}
	jobs, err := client.New(meter.rdb, client.Options{Keys: cl.Keys()})
	if err != nil {
		return CrawlResult{}, err
	}
	start := time.Now()
	if err := jobs.Submit(ctx, spec); err != nil {
		return CrawlResult{}, err
	}
	progress, err := waitFinished(ctx, meter.rdb, cl, name, start)
	if err != nil {
		return CrawlResult{}, err
	}
	wall := time.Since(start)
	after, err := readJob(ctx, meter, cl)
	if err != nil {
		return CrawlResult{}, err
	}
	res := crawlResult(before, after, progress, wall)
	res.Tapped = cl.Tapped()
	if res.MasterPeakRSS, res.SlavePeakRSS, err = cl.peakRSS(); err != nil {
		return res, err
	}
	st, err := jobs.Status(ctx, name)
	if err != nil {
		return res, err
	}
	res.ListPages, res.Failed, res.Status = st.Counters.ListPages, st.Counters.Failed, *st
	return res, nil
}

func crawlResult(before, after jobReading, progress []progressPoint, wall time.Duration) CrawlResult {
	procs := after.procs.since(before.procs)
	master, slaves := procs.role("master"), procs.role("slave")
	return CrawlResult{
		Pages: progress[len(progress)-1].stored, Wall: wall, SteadyRate: steadyRate(progress),
		MasterCPU: master.CPU, SlavesCPU: slaves.CPU, BenchCPU: after.bench - before.bench,
		Redis: after.redis.since(before.redis), MasterTap: master.Tap, SlavesTap: slaves.Tap,
	}
}

// progressPoint is one poll of a job's stored pages.
type progressPoint struct {
	at     time.Duration
	stored int64
}

// pollEvery is how often the benchmark reads a job's progress: two HGETs
// in one round trip, taken out of Redis's totals.
const pollEvery = 50 * time.Millisecond

// waitFinished polls the job until it is finished, recording its progress;
// it fails at once if a process exits.
func waitFinished(ctx context.Context, rdb redis.UniversalClient, cl *crawlCluster, job string, start time.Time) ([]progressPoint, error) {
	jk := cl.Keys().Job(job)
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	var points []progressPoint
	for {
		pipe := rdb.Pipeline()
		state := pipe.HGet(ctx, jk.State(), cluster.StateField)
		stored := pipe.HGet(ctx, jk.Stats(), cluster.StatStored)
		_, err := pipe.Exec(ctx)
		if err != nil && !errors.Is(err, redis.Nil) {
			return points, fmt.Errorf("poll job %s: %w", job, err)
		}
		n, _ := stored.Int64()
		points = append(points, progressPoint{at: time.Since(start), stored: n})
		if state.Val() == cluster.StateFinished {
			return points, nil
		}
		select {
		case <-ctx.Done():
			return points, fmt.Errorf("wait for job %s (%d pages stored): %w", job, n, ctx.Err())
		case <-cl.exited:
			return points, cl.exitError()
		case <-t.C:
		}
	}
}

// steadyRate is the pages stored per second between the polls that first
// saw 10% and 90% of the final count; the whole job's rate when those
// are one poll.
func steadyRate(points []progressPoint) float64 {
	last := points[len(points)-1]
	first := func(share float64) progressPoint {
		for _, p := range points {
			if float64(p.stored) >= share*float64(last.stored) {
				return p
			}
		}
		return last
	}
	lo, hi := first(0.1), first(0.9)
	if hi.at <= lo.at {
		return float64(last.stored) / last.at.Seconds()
	}
	return float64(hi.stored-lo.stored) / (hi.at - lo.at).Seconds()
}
