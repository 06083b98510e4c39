package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/jobspec"
)

// IdleOptions configures the idle-cost benchmark.
type IdleOptions struct {
	// Binary is the crawler executable to start as master and slaves.
	Binary string
	// RedisURL is the Redis the cluster meets in.
	RedisURL string
	// Slaves is the number of slaves started beside the master.
	Slaves int
	// Duration is how long each idle phase is measured.
	Duration time.Duration
	// AfterJob adds a second phase, measured once a small job has
	// finished: a finished job must not keep the cluster busy either.
	AfterJob bool
	// Tap counts each process's commands and round trips on the wire.
	Tap bool
	// Timeout bounds the whole benchmark.
	Timeout time.Duration

	scripts *scriptNames
}

// DefaultIdleOptions are the idle benchmark's defaults.
func DefaultIdleOptions() IdleOptions {
	return IdleOptions{RedisURL: "redis://127.0.0.1:6379/0", Slaves: 4, Duration: 10 * time.Second,
		AfterJob: true, Tap: true, Timeout: 5 * time.Minute}
}

// Validate reports the first bad option, by field.
func (o IdleOptions) Validate() error {
	switch {
	case o.Binary == "":
		return errors.New("bench idle: no crawler binary")
	case o.Slaves < 0 || o.Slaves > cluster.DefaultMaxSlaves:
		return cluster.Invalid("Slaves", o.Slaves, "is outside 0..%d", cluster.DefaultMaxSlaves)
	case o.Duration < time.Second || o.Duration > time.Hour:
		return cluster.Invalid("Duration", o.Duration, "is outside 1s..1h")
	case o.Timeout <= 0:
		return cluster.Invalid("Timeout", o.Timeout, "must be positive")
	}
	return nil
}

// Args are the `crawler-bench idle` flags that reproduce o (Redis aside).
func (o IdleOptions) Args() []string {
	args := []string{"--slaves", strconv.Itoa(o.Slaves), "--duration", o.Duration.String()}
	if !o.AfterJob {
		args = append(args, "--after-job=false")
	}
	if !o.Tap {
		args = append(args, "--tap=false")
	}
	return args
}

// IdleResult is one measured idle phase.
type IdleResult struct {
	// Phase says what the cluster had done: "no job yet", "after a
	// finished job".
	Phase string
	// Nodes is the number of processes: the master and the slaves.
	Nodes int
	// Elapsed is the measured interval.
	Elapsed time.Duration
	// Redis is what Redis did, the benchmark's own commands taken out.
	Redis RedisStats
	// Tapped says whether Master and Slaves were counted.
	Tapped bool
	// Master and Slaves are the processes' CPU and tap counts, the
	// slaves' summed.
	Master, Slaves processSample
	slaves         int
}

// PerSecond divides a count by the measured seconds.
func (r IdleResult) PerSecond(n float64) float64 { return n / r.Elapsed.Seconds() }

// Idle starts a master and slaves with no job and measures what they cost
// Redis while idle; then, when asked, again after a small job finished.
func Idle(ctx context.Context, opts IdleOptions) (results []IdleResult, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	if opts.scripts == nil {
		opts.scripts = newScriptNames()
	}
	meter, err := newRedisMeter(opts.RedisURL, opts.scripts)
	if err != nil {
		return nil, err
	}
	defer meter.rdb.Close()
	copts := CrawlOptions{Binary: opts.Binary, RedisURL: opts.RedisURL, Concurrency: 8, Tap: opts.Tap, scripts: opts.scripts}
	cl, err := startCluster(ctx, meter.rdb, copts, opts.Slaves)
	if cl != nil {
		defer func() {
			err = errors.Join(err, cl.stop())
			deletePrefix(context.WithoutCancel(ctx), meter.rdb, cl.prefix)
		}()
	}
	if err != nil {
		return nil, err
	}
	r, err := measureIdle(ctx, meter, cl, opts, "no job yet")
	if err != nil || !opts.AfterJob {
		return []IdleResult{r}, err
	}
	if err := runSmallJob(ctx, meter, cl); err != nil {
		return []IdleResult{r}, err
	}
	after, err := measureIdle(ctx, meter, cl, opts, "after a finished job")
	return []IdleResult{r, after}, err
}

// runSmallJob crawls a 100-page site to the end and lets the cluster settle.
func runSmallJob(ctx context.Context, meter redisMeter, cl *crawlCluster) error {
	sites, err := serveHosts(1, demosite.Options{Details: 100, GoneEvery: -1, FlakyEvery: -1})
	if err != nil {
		return err
	}
	defer sites.Close()
	job := demosite.Job{Name: "idle", Seeds: sites.seeds(true), AllowedDomains: sites.hosts,
		PerHostRPS: jobspec.MaxPerHostRPS, PerHostConcurrency: jobspec.MaxPerHostInFlight, Capacity: 100_000}
	if _, err := measureCrawl(ctx, meter, cl, job.Name, job.YAML()); err != nil {
		return fmt.Errorf("small job: %w", err)
	}
	return sleepCtx(ctx, 2*settle)
}

func measureIdle(ctx context.Context, meter redisMeter, cl *crawlCluster, opts IdleOptions, phase string) (IdleResult, error) {
	before, err := readJob(ctx, meter, cl)
	if err != nil {
		return IdleResult{}, err
	}
	select {
	case <-ctx.Done():
		return IdleResult{}, ctx.Err()
	case <-cl.exited:
		return IdleResult{}, cl.exitError()
	case <-time.After(opts.Duration):
	}
	after, err := readJob(ctx, meter, cl)
	if err != nil {
		return IdleResult{}, err
	}
	procs := after.procs.since(before.procs)
	return IdleResult{Phase: phase, Nodes: opts.Slaves + 1, Elapsed: after.redis.at.Sub(before.redis.at),
		Redis: after.redis.since(before.redis), Tapped: cl.Tapped(),
		Master: procs.role("master"), Slaves: procs.role("slave"), slaves: opts.Slaves}, nil
}

// WriteIdle prints the idle tables in format f.
func WriteIdle(w io.Writer, f Format, results []IdleResult) error {
	return WriteTables(w, f, IdleTables(results)...)
}

// IdleTables are the idle benchmark's tables: the cost per second and per
// node, then by command.
func IdleTables(results []IdleResult) []Table {
	t := Table{
		Header: []string{"phase", "nodes", "Redis cmds/s", "Redis cmds/s per node", "Redis CPU",
			"master sent/s", "master round trips/s", "sent/s per slave", "round trips/s per slave", "crawler CPU"},
		Notes: []string{
			"Redis cmds/s: INFO commandstats calls (script-internal ones included) over the interval, per second; " +
				"per node: over the master and the slaves. Redis CPU: used_cpu_user + used_cpu_sys per second of the interval.",
			"sent and round trips: counted on the wire by a loopback proxy per process. crawler CPU: master and slaves " +
				"together, from /proc/<pid>/stat, per second.",
		},
	}
	if len(results) > 0 {
		t.Caption = fmt.Sprintf("An idle cluster: a master and %d slaves, no job running, measured for %v per phase.",
			results[0].slaves, results[0].Elapsed.Round(100*time.Millisecond))
	}
	for _, r := range results {
		sent, trips, slaveSent, slaveTrips := "n/a", "n/a", "n/a", "n/a"
		if r.Tapped {
			sent = fmt.Sprintf("%.1f", r.PerSecond(float64(r.Master.Tap.Sent())))
			trips = fmt.Sprintf("%.1f", r.PerSecond(float64(r.Master.Tap.RoundTrips)))
			if r.slaves > 0 {
				slaveSent = fmt.Sprintf("%.1f", r.PerSecond(float64(r.Slaves.Tap.Sent()))/float64(r.slaves))
				slaveTrips = fmt.Sprintf("%.1f", r.PerSecond(float64(r.Slaves.Tap.RoundTrips))/float64(r.slaves))
			}
		}
		calls := r.PerSecond(float64(r.Redis.Calls()))
		t.AddRow(r.Phase, strconv.Itoa(r.Nodes), fmt.Sprintf("%.1f", calls), fmt.Sprintf("%.1f", calls/float64(r.Nodes)),
			fmt.Sprintf("%.2f ms/s", r.PerSecond(float64(r.Redis.CPU))/float64(time.Millisecond)),
			sent, trips, slaveSent, slaveTrips,
			fmt.Sprintf("%.1f ms/s", r.PerSecond(float64(r.Master.CPU+r.Slaves.CPU))/float64(time.Millisecond)))
	}
	return []Table{t, idleBreakdown(results)}
}

// idleBreakdown is an idle cluster's calls per second by command, in
// Redis and as each role sent them.
func idleBreakdown(results []IdleResult) Table {
	t := Table{
		Caption: "Where an idle cluster's commands come from, per second: Redis's commandstats, then what the master " +
			"and the slaves (all together) sent.",
		Header: []string{"source", "command"},
	}
	for _, r := range results {
		t.Header = append(t.Header, r.Phase)
	}
	sources := []struct {
		name   string
		counts func(IdleResult) map[string]int64
	}{
		{"Redis", func(r IdleResult) map[string]int64 {
			m := map[string]int64{}
			for k, c := range r.Redis.Commands {
				m[k] = c.Calls
			}
			return m
		}},
		{"master", func(r IdleResult) map[string]int64 { return r.Master.Tap.Commands }},
		{"slaves", func(r IdleResult) map[string]int64 { return r.Slaves.Tap.Commands }},
	}
	for _, src := range sources {
		names := map[string]int64{}
		for _, r := range results {
			for k, v := range src.counts(r) {
				names[k] += v
			}
		}
		keys := make([]string, 0, len(names))
		for k := range names {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(names[b], names[a]), strings.Compare(a, b)) })
		for _, k := range keys {
			row := []string{src.name, k}
			for _, r := range results {
				row = append(row, fmt.Sprintf("%.2f", r.PerSecond(float64(src.counts(r)[k]))))
			}
			t.AddRow(row...)
		}
	}
	return t
}
