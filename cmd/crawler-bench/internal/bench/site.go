package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/jobspec"
)

// Crawlers of the one-site benchmark.
const (
	// CrawlerCluster is one master and SiteOptions.Slaves slave processes on
	// a redis-server of the benchmark's own.
	CrawlerCluster = "cluster"
	// CrawlerRun is `crawler run`, one process on its own Redis.
	CrawlerRun = "run"
	// CrawlerColly is the colly v2 peer (cmd/crawler-bench/peers/colly).
	CrawlerColly = "colly"
)

// SiteOptions configures the one-site benchmark: the shape most users
// start with, one host walked breadth-first from its first list page,
// each list page linking the next three, some detail pages faulty. The
// crawlers run in the same run, interleaved round by round, so that the
// machine's load falls on each alike.
type SiteOptions struct {
	// Binary is the crawler executable.
	Binary string
	// RedisServer is the redis-server executable the cluster's Redis is
	// started from.
	RedisServer string
	// PeerDir is the colly peer's module, built at the start.
	PeerDir string
	// Details is the detail pages on the site.
	Details int
	// PerPage is the detail links on a list page.
	PerPage int
	// NextLinks is the list pages each list page links.
	NextLinks int
	// FaultEvery makes every n-th detail page faulty (404, 503 once, 503
	// twice, a reset, a stall, in turn).
	FaultEvery int
	// Stall is how long a stalling page takes.
	Stall time.Duration
	// Latencies are the site's latencies measured, each a section.
	Latencies []time.Duration
	// Rounds is how often each crawler crawls at each latency.
	Rounds int
	// Slaves is the cluster's slaves.
	Slaves int
	// PerHostRPS and PerHostConcurrency are the job's per-host budget;
	// PerHostConcurrency is colly's Parallelism too.
	PerHostRPS         float64
	PerHostConcurrency int
	// Crawlers are the crawlers measured, of CrawlerCluster, CrawlerRun,
	// CrawlerColly and the sink crawlers (CrawlerRunPostgres, ...).
	Crawlers []string
	// Postgres is the PostgreSQL server CrawlerRunPostgres writes to.
	Postgres string
	// Timeout bounds one crawl.
	Timeout time.Duration
	// Tap counts the cluster's commands on the wire, by role and script,
	// and adds their breakdown per page to the report.
	Tap bool
	// Stages has every crawler process write a CPU profile of its run
	// (crawler --cpu-profile), and adds the crawlers' CPU per page by
	// stage to the report (stages.go).
	Stages bool
	// Progress, when set, receives a line per crawl.
	Progress io.Writer
}

// DefaultSiteOptions are issue 16's shape: 4,000 detail pages, 18 links a
// list page (about 300 list pages, a walk about 100 levels deep), one
// detail page in 20 faulty, per_host_rps 10000 and per_host_concurrency
// 16, at 0 and 20 ms, three rounds.
func DefaultSiteOptions() SiteOptions {
	return SiteOptions{RedisServer: "redis-server", PeerDir: "cmd/crawler-bench/peers/colly",
		Details: 4000, PerPage: 18, NextLinks: 3, FaultEvery: 20, Stall: time.Second,
		Latencies: []time.Duration{0, 20 * time.Millisecond}, Rounds: 3, Slaves: 3,
		PerHostRPS: 10_000, PerHostConcurrency: 16, Crawlers: append([]string{CrawlerCluster, CrawlerRun, CrawlerColly}, sinkCrawlers...),
		Postgres: "postgres://postgres@127.0.0.1:5432/test", Timeout: 5 * time.Minute}
}

// Validate reports the first bad option, by field.
func (o SiteOptions) Validate() error {
	switch {
	case o.Binary == "":
		return errors.New("bench site: no crawler binary")
	case o.Details < 1 || o.Details > 1_000_000:
		return cluster.Invalid("Details", o.Details, "is outside 1..1000000")
	case o.PerPage < 6 || o.PerPage > 10_000:
		return cluster.Invalid("PerPage", o.PerPage, "is outside 6..10000")
	case o.NextLinks < 1 || o.NextLinks > 100:
		return cluster.Invalid("NextLinks", o.NextLinks, "is outside 1..100")
	case o.FaultEvery < 0:
		return cluster.Invalid("FaultEvery", o.FaultEvery, "must not be negative")
	case o.Stall < 0 || o.Stall > time.Minute:
		return cluster.Invalid("Stall", o.Stall, "is outside 0..1m")
	case len(o.Latencies) == 0:
		return cluster.Invalid("Latencies", o.Latencies, "must name at least one latency")
	case o.Rounds < 1 || o.Rounds > 100:
		return cluster.Invalid("Rounds", o.Rounds, "is outside 1..100")
	case o.Slaves < 1 || o.Slaves > 64:
		return cluster.Invalid("Slaves", o.Slaves, "is outside 1..64")
	case o.PerHostRPS <= 0 || o.PerHostRPS > jobspec.MaxPerHostRPS:
		return cluster.Invalid("PerHostRPS", o.PerHostRPS, "is outside 0..%d", jobspec.MaxPerHostRPS)
	case o.PerHostConcurrency < 1 || o.PerHostConcurrency > jobspec.MaxPerHostInFlight:
		return cluster.Invalid("PerHostConcurrency", o.PerHostConcurrency, "is outside 1..%d", jobspec.MaxPerHostInFlight)
	case o.Timeout <= 0:
		return cluster.Invalid("Timeout", o.Timeout, "must be positive")
	}
	for _, l := range o.Latencies {
		if l < 0 || l > time.Minute {
			return cluster.Invalid("Latencies", l, "is outside 0..1m")
		}
	}
	for _, c := range o.Crawlers {
		if c != CrawlerCluster && c != CrawlerRun && c != CrawlerColly && sinkSchemes[c] == "" {
			return cluster.Invalid("Crawlers", c, "is not cluster, run, colly, %s", strings.Join(sinkCrawlers, ", "))
		}
	}
	return nil
}

// Args are the `crawler-bench site` flags that reproduce o.
func (o SiteOptions) Args() []string {
	lat := make([]string, len(o.Latencies))
	for i, l := range o.Latencies {
		lat[i] = l.String()
	}
	args := []string{"--details", strconv.Itoa(o.Details), "--per-page", strconv.Itoa(o.PerPage),
		"--next-links", strconv.Itoa(o.NextLinks), "--fault-every", strconv.Itoa(o.FaultEvery),
		"--latency", strings.Join(lat, ","), "--rounds", strconv.Itoa(o.Rounds), "--slaves", strconv.Itoa(o.Slaves),
		"--per-host-concurrency", strconv.Itoa(o.PerHostConcurrency), "--crawlers", strings.Join(o.Crawlers, ",")}
	if o.Tap {
		args = append(args, "--tap")
	}
	if o.Stages {
		args = append(args, "--stages")
	}
	if d := DefaultSiteOptions(); o.Postgres != d.Postgres {
		args = append(args, "--postgres", o.Postgres)
	}
	return args
}

// siteOptions is the demo site of latency l.
func (o SiteOptions) siteOptions(l time.Duration) demosite.Options {
	return demosite.Options{Details: o.Details, PerPage: o.PerPage, NextLinks: o.NextLinks, FaultEvery: o.FaultEvery,
		Stall: o.Stall, GoneEvery: -1, FlakyEvery: -1, Delay: l}
}

// SiteRun is one crawl of the one-site benchmark.
type SiteRun struct {
	Crawler string
	Latency time.Duration
	Round   int
	// Stored, Failed and ListPages are what the crawler says it did;
	// Expected is the detail pages a correct crawl stores.
	Stored, Failed, ListPages, Expected int64
	// Requests is what the site served; SiteBusy the time its requests
	// took, summed (so SiteBusy / Wall is how many of the host's slots were
	// in use on average), and SitePeak the most it served at once.
	Requests int64
	SiteBusy time.Duration
	SitePeak int64
	// Wall is the crawl's time: from submit to finished for the cluster
	// (its processes already run), from start to exit for the others.
	Wall time.Duration
	// CrawlerCPU is every crawler process's CPU; RedisCPU is Redis's (the
	// cluster's redis-server, or the one `run` started for itself).
	CrawlerCPU, RedisCPU time.Duration
	// RedisCalls is the commands Redis ran, scripts' included; -1 when
	// not known (`run`, colly).
	RedisCalls int64
	// PeakRSS is the largest process's peak resident set.
	PeakRSS int64
	// SinkAccepted is what the sink of a sink crawler took, by the run's
	// summary.
	SinkAccepted int64
	// Redis says which Redis `run` used.
	Redis string
	// Detail is the cluster's whole measurement, kept when Tap is set.
	Detail *CrawlResult
	// Stages is the crawler processes' profiled CPU by stage, with
	// SiteOptions.Stages (nil for colly).
	Stages StageCPU
}

// PagesPerSecond is the detail pages stored per second of wall time.
func (r SiteRun) PagesPerSecond() float64 { return float64(r.Stored) / r.Wall.Seconds() }

// perPage divides a total by the pages stored.
func (r SiteRun) perPage(total float64) float64 { return total / float64(max(r.Stored, 1)) }

// SiteReport is the one-site benchmark's runs, the bound of each
// latency, and the machine's load around them.
type SiteReport struct {
	Opts   SiteOptions
	Runs   []SiteRun
	Bounds map[time.Duration]SiteBound
	// LoadBefore and LoadAfter are /proc/loadavg's first three fields.
	LoadBefore, LoadAfter string
}

// Site runs the one-site benchmark: at each latency, Rounds rounds of
// every crawler, the crawlers' order turning each round.
func Site(ctx context.Context, opts SiteOptions) (SiteReport, error) {
	rep := SiteReport{Opts: opts, Bounds: map[time.Duration]SiteBound{}, LoadBefore: loadAverage()}
	if err := opts.Validate(); err != nil {
		return rep, err
	}
	env, err := newSiteEnv(ctx, opts)
	if err != nil {
		return rep, err
	}
	defer env.close()
	for _, l := range opts.Latencies {
		rep.Bounds[l] = siteBound(demosite.New(opts.siteOptions(l)), opts, l)
		for round := range opts.Rounds {
			for i := range opts.Crawlers {
				name := opts.Crawlers[(i+round)%len(opts.Crawlers)]
				run, err := env.crawl(ctx, name, l)
				if err != nil {
					return rep, fmt.Errorf("%s at %v, round %d: %w", name, l, round+1, err)
				}
				run.Round = round + 1
				rep.Runs = append(rep.Runs, run)
				if opts.Progress != nil {
					fmt.Fprintf(opts.Progress, "bench site: %v %-7s round %d: %d/%d stored in %v, %.0f pages/s\n",
						l, name, run.Round, run.Stored, run.Expected, run.Wall.Round(time.Millisecond), run.PagesPerSecond())
				}
			}
		}
	}
	rep.LoadAfter = loadAverage()
	return rep, nil
}

// loadAverage is the machine's load average over 1, 5 and 15 minutes.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	var a, b, c string
	_, _ = fmt.Sscan(string(raw), &a, &b, &c)
	return a + " " + b + " " + c
}

// countingSite serves a demo site on 127.0.0.1 and counts its requests,
// the time they took and the most in flight at once: the site's own view
// of how a crawler used its slots.
type countingSite struct {
	site     *demosite.Site
	srv      *http.Server
	base     string
	requests atomic.Int64
	busy     atomic.Int64 // nanoseconds
	inFlight atomic.Int64
	peak     atomic.Int64
}

func serveSite(opts demosite.Options) (*countingSite, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serve the demo site: %w", err)
	}
	s := &countingSite{site: demosite.New(opts), base: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		cw := &countedWriter{ResponseWriter: w, done: s.enter()}
		defer cw.leave()
		s.site.ServeHTTP(cw, r)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// enter counts a request in flight, and the peak; done counts it out.
func (s *countingSite) enter() (done func()) {
	n := s.inFlight.Add(1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	start := time.Now()
	return func() {
		s.busy.Add(int64(time.Since(start)))
		s.inFlight.Add(-1)
	}
}

// countedWriter counts its request out when the handler returns, or
// before it hijacks the connection to reset it: the client sees the reset
// as the connection closes, and may send its next request before the
// handler returns.
type countedWriter struct {
	http.ResponseWriter
	done func()
	once sync.Once
}

func (c *countedWriter) leave() { c.once.Do(c.done) }

// Hijack counts the request out, then hands over the connection.
func (c *countedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c.leave()
	hj, ok := c.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("bench site: the connection cannot be hijacked")
	}
	return hj.Hijack()
}

// expected is the detail pages a correct crawl stores.
func (s *countingSite) expected() int64 {
	var n int64
	for _, o := range s.site.Expected() {
		if o == demosite.Stored {
			n++
		}
	}
	return n
}

func (s *countingSite) job() demosite.Job {
	return demosite.Job{Name: "bench-site", Seeds: []string{s.base + "/list/1"}, AllowedDomains: []string{"127.0.0.1"},
		Capacity: 100_000}
}

// writeJob writes the job file of a crawl of s to dir.
func (s *countingSite) writeJob(dir string, o SiteOptions) (string, error) {
	j := s.job()
	j.PerHostRPS, j.PerHostConcurrency = o.PerHostRPS, o.PerHostConcurrency
	path := filepath.Join(dir, "job.yaml")
	return path, os.WriteFile(path, []byte(j.YAML()), 0o644)
}
