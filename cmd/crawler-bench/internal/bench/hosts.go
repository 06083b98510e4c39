package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/slave"
)

// The job file's politeness defaults, which the many-host job keeps: a
// host's rate (downloader.DefaultHostRPS) and its requests in flight
// (jobspec.DefaultPerHostConcurrency).
const (
	hostsRate     = downloader.DefaultHostRPS
	hostsInFlight = jobspec.DefaultPerHostConcurrency
)

// hostsBurst is a host's burst at the default rate, by the downloader's
// rule (downloader/job.go, rule): a tenth of a second's worth of the rate,
// at least 1. Within any second a host sees at most rate + burst.
func hostsBurst() int {
	rps := float64(hostsRate)
	return max(int(rps/10), 1)
}

// HostsOptions configures the many-host benchmark (issue 28): what a user
// who crawls many sites at once runs. H small sites are served by this
// process on H loopback addresses, each a host of its own; one job seeds
// every site's first list page on the job file's politeness defaults, and
// a master and N slaves crawl it.
type HostsOptions struct {
	// Binary is the crawler executable.
	Binary string
	// RedisURL is the Redis the cluster meets in.
	RedisURL string
	// Hosts are the numbers of sites measured, each a row per slave count.
	Hosts []int
	// Slaves are the cluster sizes measured at each number of sites.
	Slaves []int
	// DetailsPerHost is each site's detail pages, behind ListPages list
	// pages chained by next links.
	DetailsPerHost, ListPages int
	// Latency is added to every response.
	Latency time.Duration
	// FaultEvery makes every n-th detail page faulty (a 404, a 503 once, a
	// 503 twice, a reset, a stall of 1 s, in turn); 0: none.
	FaultEvery int
	// Rounds is how often each row is measured.
	Rounds int
	// BusyLoops is the shells kept spinning for the whole benchmark, to
	// measure on a busy machine.
	BusyLoops int
	// Timeout bounds one crawl.
	Timeout time.Duration
	// Tap counts each process's commands and round trips with a loopback
	// proxy in front of Redis (a proxy per process, in this process: off
	// by default, since at 1,000 hosts it shares the cores with what it
	// measures).
	Tap bool
	// Progress, when set, receives a line per crawl.
	Progress io.Writer

	scripts *scriptNames
}

// DefaultHostsOptions are issue 28's shape: 40, 120 and 1,000 sites of 130
// detail pages behind 10 list pages each, 100 ms latency, one detail page
// in 50 faulty, 3 slaves, one round.
func DefaultHostsOptions() HostsOptions {
	return HostsOptions{RedisURL: "redis://127.0.0.1:6379/0", Hosts: []int{40, 120, 1000}, Slaves: []int{3},
		DetailsPerHost: 130, ListPages: 10, Latency: 100 * time.Millisecond, FaultEvery: 50, Rounds: 1,
		Timeout: 10 * time.Minute}
}

// Validate reports the first bad option, by field.
func (o HostsOptions) Validate() error {
	switch {
	case o.Binary == "":
		return errors.New("bench hosts: no crawler binary")
	case len(o.Hosts) == 0:
		return cluster.Invalid("Hosts", o.Hosts, "must name at least one number of sites")
	case len(o.Slaves) == 0:
		return cluster.Invalid("Slaves", o.Slaves, "must name at least one cluster size")
	case o.DetailsPerHost < 1 || o.DetailsPerHost > 100_000:
		return cluster.Invalid("DetailsPerHost", o.DetailsPerHost, "is outside 1..100000")
	case o.ListPages < 1 || o.ListPages > o.DetailsPerHost:
		return cluster.Invalid("ListPages", o.ListPages, "is outside 1..DetailsPerHost (%d)", o.DetailsPerHost)
	case o.Latency < 0 || o.Latency > time.Minute:
		return cluster.Invalid("Latency", o.Latency, "is outside 0..1m")
	case o.FaultEvery < 0:
		return cluster.Invalid("FaultEvery", o.FaultEvery, "must not be negative")
	case o.Rounds < 1 || o.Rounds > 100:
		return cluster.Invalid("Rounds", o.Rounds, "is outside 1..100")
	case o.BusyLoops < 0 || o.BusyLoops > 64:
		return cluster.Invalid("BusyLoops", o.BusyLoops, "is outside 0..64")
	case o.Timeout <= 0:
		return cluster.Invalid("Timeout", o.Timeout, "must be positive")
	}
	return o.validateSizes()
}

func (o HostsOptions) validateSizes() error {
	for _, h := range o.Hosts {
		if h < 1 || h > MaxManyHosts {
			return cluster.Invalid("Hosts", h, "is outside 1..%d", MaxManyHosts)
		}
	}
	for _, n := range o.Slaves {
		if n < 1 || n > cluster.DefaultMaxSlaves {
			return cluster.Invalid("Slaves", n, "is outside 1..%d", cluster.DefaultMaxSlaves)
		}
	}
	return nil
}

// Args are the `crawler-bench hosts` flags that reproduce o (Redis aside).
func (o HostsOptions) Args() []string {
	args := []string{"--hosts", joinComma(o.Hosts), "--slaves", joinComma(o.Slaves),
		"--details-per-host", strconv.Itoa(o.DetailsPerHost), "--list-pages", strconv.Itoa(o.ListPages),
		"--latency", o.Latency.String(), "--fault-every", strconv.Itoa(o.FaultEvery), "--rounds", strconv.Itoa(o.Rounds)}
	if o.BusyLoops > 0 {
		args = append(args, "--busy-loops", strconv.Itoa(o.BusyLoops))
	}
	if o.Tap {
		args = append(args, "--tap")
	}
	return args
}

func joinComma(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// siteOptions is one site: its list pages linking the next only, no
// detail linked twice, the faults and the redirect loop.
func (o HostsOptions) siteOptions() demosite.Options {
	return demosite.Options{Details: o.DetailsPerHost, PerPage: (o.DetailsPerHost + o.ListPages - 1) / o.ListPages,
		Overlap: -1, GoneEvery: -1, FlakyEvery: -1, FaultEvery: o.FaultEvery, Delay: o.Latency, RedirectLoop: true}
}

// crawlOptions are the cluster's: slaves at their default concurrency,
// items to JSON Lines files, taps only when asked for.
func (o HostsOptions) crawlOptions() CrawlOptions {
	c := DefaultCrawlOptions()
	c.Binary, c.RedisURL, c.Concurrency, c.Tap, c.Timeout, c.scripts = o.Binary, o.RedisURL, slave.DefaultConcurrency,
		o.Tap, o.Timeout, o.scripts
	return c
}

// HostsRun is one crawl of the many-host benchmark.
type HostsRun struct {
	Hosts, Slaves, Round int
	// Crawl is the cluster's measurement: wall time, CPU, Redis.
	Crawl CrawlResult
	// Items is what the item files hold against what the sites expect.
	Items ItemCount
	// Site is what each host saw.
	Site SiteView
}

// Bound is the politeness bound: the busiest host's requests, as the site
// counted them, at the default rate. No crawler that keeps to the rate can
// finish sooner.
func (r HostsRun) Bound() time.Duration {
	return time.Duration(float64(r.Site.Busiest().Requests) / hostsRate * float64(time.Second))
}

// OfBound is the bound over the wall time: 1 is as fast as politeness
// allows.
func (r HostsRun) OfBound() float64 { return r.Bound().Seconds() / r.Crawl.Wall.Seconds() }

// label names the run in the breakdown's columns.
func (r HostsRun) label() string {
	s := fmt.Sprintf("H = %s, %s", grouped(r.Hosts), runHeader(CrawlResult{Slaves: r.Slaves}))
	if r.Round > 1 {
		s += fmt.Sprintf(", round %d", r.Round)
	}
	return s
}

// HostsReport is the many-host benchmark's runs and the machine's load
// around them.
type HostsReport struct {
	Opts HostsOptions
	Runs []HostsRun
	// LoadBefore and LoadAfter are /proc/loadavg's first three fields.
	LoadBefore, LoadAfter string
}

// Hosts runs the many-host benchmark: Rounds times, each number of sites
// with each cluster size, on fresh sites (their faults not yet spent).
func Hosts(ctx context.Context, opts HostsOptions) (HostsReport, error) {
	rep := HostsReport{Opts: opts, LoadBefore: loadAverage()}
	if err := opts.Validate(); err != nil {
		return rep, err
	}
	if opts.scripts == nil {
		opts.scripts = newScriptNames()
	}
	loops, err := startBusyLoops(opts.BusyLoops)
	if err != nil {
		return rep, err
	}
	defer loops.stop()
	for round := 1; round <= opts.Rounds; round++ {
		for _, h := range opts.Hosts {
			for _, n := range opts.Slaves {
				run, err := hostsOnce(ctx, opts, h, n)
				run.Round = round
				run.Crawl.Label = run.label()
				if err != nil {
					return rep, fmt.Errorf("%d hosts, %d slaves, round %d: %w", h, n, round, err)
				}
				rep.Runs = append(rep.Runs, run)
				opts.progress(run)
			}
		}
	}
	rep.LoadAfter = loadAverage()
	return rep, nil
}

func (o HostsOptions) progress(r HostsRun) {
	if o.Progress == nil {
		return
	}
	fmt.Fprintf(o.Progress, "bench hosts: %s: %d/%d stored in %v, %.2f of the bound, %.1f Redis cmds/page\n",
		r.label(), r.Items.Stored, r.Items.Expected, r.Crawl.Wall.Round(10*time.Millisecond), r.OfBound(),
		r.Crawl.PerPage(float64(r.Crawl.Redis.Calls())))
}

// hostsOnce serves the sites, crawls them with a fresh cluster and reads
// what the item files hold and what each host saw.
func hostsOnce(ctx context.Context, opts HostsOptions, hosts, slaves int) (HostsRun, error) {
	run := HostsRun{Hosts: hosts, Slaves: slaves}
	sites, err := serveManySites(hosts, opts.siteOptions())
	if err != nil {
		return run, err
	}
	defer sites.Close()
	expected := sites.expectedURLs()
	job := demosite.Job{Name: "hosts", Seeds: sites.seeds(false), AllowedDomains: sites.hosts,
		Capacity: max(100_000, 2*int64(len(expected)))}
	run.Crawl, err = crawlJobThen(ctx, opts.crawlOptions(), slaves, job.Name, job.YAML(), func(dir string) error {
		var err error
		run.Items, err = countItems(dir, expected)
		return err
	})
	run.Crawl.Details = len(expected)
	run.Site = sites.view()
	return run, err
}
