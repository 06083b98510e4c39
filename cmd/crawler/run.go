package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/redisserver"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/master"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/sink"
	"github.com/crawler-dev/crawler/slave"
	"github.com/crawler-dev/crawler/store"
)

// runConfig is an all-in-one crawl: one master and some slaves in this
// process, on an embedded Redis and a JSON Lines file unless told otherwise.
type runConfig struct {
	redis       string // "" = a private redis-server, or the in-process Redis
	redisServer string // the redis-server to start when redis is ""; "" = in-process
	mongo       string // "" = JSON Lines to output
	output      string
	slaves      int
	concurrency int
	timeout     time.Duration
	prefix      string
	quiet       bool
	metrics     metricsFlag
	sinks       sinkFlags
	// failures, set by crawlHere, tallies this run's failures when they
	// go to a file (runStore fills it).
	failures **runFailures
}

// Defaults of `crawler run`: one slave fetching 48 pages at once. In one
// process more slaves only split each host's slots among themselves, and a
// slave whose pages stall then waits on its part while the others' idle:
// on one site, three slaves at 16 ran at 0.73-0.81 of colly's pages/s, one
// at 48 at 0.89-0.90 (crawler-bench site).
const (
	runSlaves      = 1
	runConcurrency = 48
)

// register registers the flags of an all-in-one crawl, with its default
// items file, slaves and concurrency.
func (c *runConfig) register(cmd *cobra.Command, defaultOutput string, slaves, concurrency int) {
	f := cmd.Flags()
	f.StringVar(&c.redis, "redis", "", "Redis URL (default: a private redis-server started for this run when the --redis-server executable is found, else an in-process Redis)")
	f.StringVar(&c.redisServer, "redis-server", "redis-server", "without --redis: the redis-server executable to start a private Redis from (on a socket of its own, nothing kept on disk, stopped with the run); empty: always the in-process Redis")
	f.StringVar(&c.mongo, "mongo", "", "MongoDB URI (default: write items to --output)")
	f.StringVarP(&c.output, "output", "o", defaultOutput, "items file when --mongo is not given: .jsonl, .json or .csv (appended to), or - for stdout")
	f.IntVar(&c.slaves, "slaves", slaves, "slaves to run in this process")
	f.IntVar(&c.concurrency, "concurrency", concurrency, "pages each slave fetches at once")
	f.DurationVar(&c.timeout, "timeout", 0, "give up after this long (0: no limit)")
	f.StringVar(&c.prefix, "prefix", cluster.DefaultPrefix, "prefix of every Redis key")
	f.BoolVarP(&c.quiet, "quiet", "q", false, "show no progress, only the final summary")
	c.metrics.register(cmd)
	c.sinks.register(cmd)
}

func (c *runConfig) validate() error {
	if err := errors.Join(c.metrics.validate(), c.sinks.validate()); err != nil {
		return err
	}
	switch {
	case c.slaves < 1 || c.slaves > cluster.DefaultMaxSlaves:
		return fmt.Errorf("--slaves: %d is outside 1..%d", c.slaves, cluster.DefaultMaxSlaves)
	case c.concurrency < 1:
		return fmt.Errorf("--concurrency: %d must be at least 1", c.concurrency)
	case c.mongo == "" && c.output == "":
		return errors.New("-o/--output: an items file is required without --mongo")
	}
	if c.mongo == "" {
		if _, err := store.FormatOf(c.output); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
	}
	return nil
}

// itemsOnStdout reports whether the items are written to stdout (-o -).
func (c *runConfig) itemsOnStdout() bool { return c.mongo == "" && c.output == store.Stdout }

func newRunCmd(a *app) *cobra.Command {
	var (
		cfg     runConfig
		jobFile string
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Crawl one job on this machine: master and slaves in one process, no servers needed",
		Example: `  crawler run --job news.yaml -o news.jsonl
  crawler run --job news.yaml -o news.csv --slaves 4 --concurrency 32
  crawler run --job news.yaml -o - | jq .fields.title          # items on stdout
  crawler run --job news.yaml --redis redis://127.0.0.1:6379/0   # a real Redis: resumable after Ctrl-C`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.validate(); err != nil {
				return err
			}
			spec, err := readJobFile(jobFile)
			if err != nil {
				return err
			}
			if err := refuseRecurring(spec); err != nil {
				return err
			}
			if len(spec.Notify) > 0 {
				a.logger.Warn("notify: run sends no webhooks; the masters of a cluster do (crawler master --webhook-secret-file)")
			}
			return crawlHere(cmd, a, cfg, spec, nil)
		},
	}
	cmd.Flags().StringVar(&jobFile, "job", "", "job file (YAML)")
	cfg.register(cmd, "items.jsonl", runSlaves, runConcurrency)
	a.render.register(cmd)
	return cmd
}

// crawlHere crawls spec to the end in this process, showing its progress
// on stderr, and prints the summary. check, when not nil, adds to the
// summary (the demo compares the crawl with its site).
func crawlHere(cmd *cobra.Command, a *app, cfg runConfig, spec *jobspec.Job, check func(io.Writer, *client.Status)) error {
	con, err := runConsole(cmd, a, cfg.quiet)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	interrupted := context.AfterFunc(ctx, func() {
		stop() // a second Ctrl-C quits at once
		if cmd.Context().Err() == nil {
			a.logger.Warn("interrupted: finishing the pages in progress; press Ctrl-C again to quit at once")
		}
	})
	defer interrupted()
	reg, err := metrics.New(metrics.DefaultOptions())
	if err != nil {
		return err
	}
	started := time.Now()
	cfg.failures = new(*runFailures)
	defer a.render.close()
	st, redisUsed, err := runAllInOne(ctx, a, cfg, spec, reg, con)
	con.done()
	if st != nil {
		out := reportWriter(cmd, cfg)
		printRunSummary(out, cfg, st, reg, time.Since(started))
		fmt.Fprintf(out, "redis: %s\n", redisUsed)
		if check != nil {
			check(out, st)
		}
	}
	return runOutcome(ctx, cfg, spec, st, err, started)
}

// runConsole builds the console that shows a run's progress and the
// logger that writes through it. --quiet logs only warnings and errors,
// unless --log-level was given (on the command line, in CRAWLER_LOG_LEVEL
// or in the config file).
func runConsole(cmd *cobra.Command, a *app, quiet bool) (*console, error) {
	con := newConsole(os.Stderr, quiet)
	logger, err := newLoggerTo(runLogLevel(cmd, a.logLevel, quiet), a.logFormat, con)
	if err != nil {
		return nil, err
	}
	a.useLogger(logger)
	if a.logFormat == "json" {
		con.logJSON(logger.Named("progress"))
	}
	return con, nil
}

// runLogLevel is the log level of a run: warn with --quiet, unless
// --log-level was set (it is Changed when set from the environment or the
// config file too).
func runLogLevel(cmd *cobra.Command, level string, quiet bool) string {
	if f := cmd.Flags().Lookup("log-level"); quiet && (f == nil || !f.Changed) {
		return "warn"
	}
	return level
}

// reportWriter is where a run's summary and other messages go: stdout,
// unless the items go there (-o -), which must hold nothing else.
func reportWriter(cmd *cobra.Command, cfg runConfig) io.Writer {
	if cfg.itemsOnStdout() {
		return cmd.ErrOrStderr()
	}
	return cmd.OutOrStdout()
}

// runOutcome is the command's verdict: an interruption says so and how to
// go on; a job in which nothing could be fetched, or no detail page
// stored because every one failed, is a failure, with its reasons.
func runOutcome(ctx context.Context, cfg runConfig, spec *jobspec.Job, st *client.Status, err error, started time.Time) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		if cfg.redis == "" {
			return errors.New("interrupted before the job finished; what was stored is in the output (this run's own Redis is gone: run again to crawl anew, or use --redis to resume)")
		}
		same := "--redis"
		if cfg.prefix != cluster.DefaultPrefix {
			same = "--redis and --prefix " + cfg.prefix
		}
		return fmt.Errorf("interrupted before the job finished; run again with the same %s to resume job %s", same, spec.Name)
	}
	if err != nil {
		return err
	}
	why := st.Counters.NothingStored()
	switch {
	case why == "":
	case st.Counters.ListPages == 0:
		return fmt.Errorf("nothing could be fetched; %s", failureReasons(ctx, cfg, spec.Name, started))
	case st.Counters.Discovered == 0:
		return fmt.Errorf("no item was stored: %s%s; try the job's rules on a page with `crawler check --job <job file> --url %s`",
			why, warningsNote(st), firstSeed(spec))
	case st.Counters.Failed+st.Counters.Skipped == 0:
		return fmt.Errorf("no item was stored: %s%s", why, warningsNote(st))
	default:
		return fmt.Errorf("%s; %s", why, failureReasons(ctx, cfg, spec.Name, started))
	}
	return nil
}

// submitOrResume submits spec, or, on a Redis of the user's (--redis)
// where the job is still pending or running (a run interrupted), resumes
// it: this run's master takes the job over where the last one left it.
func submitOrResume(ctx context.Context, a *app, cfg runConfig, cl *client.Client, spec *jobspec.Job) error {
	err := cl.Submit(ctx, spec)
	if cfg.redis == "" || !errors.Is(err, client.ErrJobActive) {
		return err
	}
	a.logger.Info("resuming the job where the last run left it (as it was submitted then)", zap.String("job", spec.Name))
	return nil
}

// firstSeed is the job's first seed URL, for a suggestion.
func firstSeed(spec *jobspec.Job) string {
	if len(spec.Seeds) == 0 {
		return "URL"
	}
	return spec.Seeds[0]
}

// runAllInOne submits spec and crawls it to the end in this process.
// It returns the final status and which Redis it crawled on.
func runAllInOne(ctx context.Context, a *app, cfg runConfig, spec *jobspec.Job, reg *metrics.Registry, con *console) (*client.Status, string, error) {
	if cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
	}
	backend, err := runRedis(ctx, cfg, a.logger)
	if err != nil {
		return nil, "", err
	}
	what := backend.what
	defer backend.close()
	rdb := backend.rdb
	st, closeStore, err := runStore(ctx, a, cfg, spec)
	if err != nil {
		return nil, "", err
	}
	defer closeStore()
	sinks, err := cfg.sinks.open(ctx, reg, a.logger)
	if err != nil {
		return nil, "", err
	}
	defer closeSinks(sinks, a.logger)
	serveMetrics, err := cfg.metrics.serve(ctx, reg, a.logger)
	if err != nil {
		return nil, "", err
	}
	defer runAside(ctx, serveMetrics)()

	keys := cluster.Keys{Prefix: cfg.prefix}
	stopCluster, err := startCluster(ctx, a, cfg, backend, keys, st, sinks, reg)
	if err != nil {
		return nil, "", err
	}
	defer stopCluster()
	counter := newSinkCounter(sinks, rdb, keys, a.logger)
	defer runAside(ctx, counter.run)()
	// Submit once every slave is live, or the first to register would be
	// routed all the work of a fast list walk.
	cl, err := client.New(rdb, client.Options{Keys: keys})
	if err != nil {
		return nil, "", err
	}
	if err := cl.WaitSlaves(ctx, cfg.slaves); err != nil {
		return nil, "", err
	}
	if err := submitOrResume(ctx, a, cfg, cl, spec); err != nil {
		return nil, "", err
	}
	status, err := cl.Wait(ctx, spec.Name, 250*time.Millisecond, con.show)
	if err != nil && ctx.Err() != nil {
		// Interrupted: the slaves finish the pages being fetched, store and
		// acknowledge them, and hand back the rest; the summary then shows
		// what the drain left, not what was in flight when it began.
		a.logger.Warn("draining: the pages being fetched finish and are stored")
		stopCluster()
		if final, ferr := cl.Status(context.WithoutCancel(ctx), spec.Name); ferr == nil {
			status = final
		}
	}
	if err != nil {
		return status, what, fmt.Errorf("crawl %s: %w", spec.Name, err)
	}
	return withSinkCounts(ctx, cl, counter, status), what, nil
}

// withSinkCounts adds what the sinks did that is not counted yet to the
// job's status, and reads it again: the summary shows every record.
func withSinkCounts(ctx context.Context, cl *client.Client, counter *sinkCounter, status *client.Status) *client.Status {
	if counter.sinks.Len() == 0 {
		return status
	}
	counter.flushLast(ctx)
	if final, err := cl.Status(context.WithoutCancel(ctx), status.Job); err == nil {
		return final
	}
	return status
}

// runAside runs s (when not nil) until the returned function is called,
// which stops it and waits for it to return.
func runAside(ctx context.Context, s service) (stop func()) {
	if s == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s(ctx)
	}()
	return func() { cancel(); <-done }
}

// runBackend is the Redis a run crawls on.
type runBackend struct {
	rdb   redis.UniversalClient
	close func()
	// tune, when not nil, fits the master's options to this Redis (the
	// in-process one, see embeddedRedis).
	tune func(*master.Options)
	// what says which Redis it is, for the summary.
	what string
}

// runRedis connects to --redis when given. Else it starts a private
// redis-server (--redis-server) on a socket of its own, and falls back to
// the in-process Redis when none is installed: a real server costs the
// run several times less CPU per command.
func runRedis(ctx context.Context, cfg runConfig, log *zap.Logger) (runBackend, error) {
	if cfg.redis != "" {
		rdb, err := openRedis(ctx, cfg.redis)
		if err != nil {
			return runBackend{}, err
		}
		return runBackend{rdb: rdb, close: func() { rdb.Close() }, what: "--redis " + store.Redact(cfg.redis)}, nil
	}
	if cfg.redisServer != "" {
		srv, err := redisserver.Start(ctx, redisserver.Options{Path: cfg.redisServer, Socket: true})
		if err == nil {
			rdb := redis.NewClient(srv.Options())
			return runBackend{rdb: rdb, close: func() { rdb.Close(); _ = srv.Close() },
				what: fmt.Sprintf("private redis-server %s (gone with the run)", srv.Version())}, nil
		}
		if !errors.Is(err, redisserver.ErrNotInstalled) {
			log.Warn("could not start a private redis-server; using the in-process Redis", zap.Error(err))
		}
	}
	return embeddedRedis()
}

// fieldNames are the job's field names, sorted: the CSV columns.
func fieldNames(spec *jobspec.Job) []string {
	var names []string
	seen := map[string]bool{}
	for _, k := range spec.PageKinds() {
		for n := range k.Fields {
			if k.Item && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names
}

// runStore opens MongoDB when configured, else the JSON Lines file.
func runStore(ctx context.Context, a *app, cfg runConfig, spec *jobspec.Job) (itemStore, func(), error) {
	if cfg.mongo != "" {
		m, err := openMongo(ctx, cfg.mongo)
		if err != nil {
			return nil, nil, mongoHint(err, "without --mongo, run writes the items to the -o file")
		}
		return m, func() { _ = m.Close(context.Background()) }, nil
	}
	j, err := store.OpenFile(cfg.output, fieldNames(spec))
	if err != nil {
		return nil, nil, fmt.Errorf("-o: %w", err)
	}
	if n, _ := j.Counts(); n > 0 {
		how := "starting the crawl over (this run's own Redis starts empty)"
		if cfg.redis != "" {
			how = "resuming job " + spec.Name + " from --redis, where its state outlived the last run"
		}
		a.logger.Info(fmt.Sprintf("%s already holds %d items: %s; pages already in it get no second line", cfg.output, n, how))
	}
	tally := newRunFailures(j)
	if cfg.failures != nil {
		*cfg.failures = tally
	}
	return tally, func() {
		if err := j.Close(); err != nil {
			a.logger.Error("close items file", zap.Error(err))
		}
	}, nil
}

// startCluster runs a master and cfg.slaves slaves as goroutines; the
// returned function stops them (the slaves drain) and waits; calling it
// again does nothing.
func startCluster(ctx context.Context, a *app, cfg runConfig, backend runBackend, keys cluster.Keys, st itemStore,
	sinks *sink.Fanout, reg *metrics.Registry) (func(), error) {
	log, rdb := a.logger, backend.rdb
	mopts := master.DefaultOptions()
	mopts.Tick = 250 * time.Millisecond
	if backend.tune != nil {
		backend.tune(&mopts)
	}
	rr, err := a.render.get(log, reg)
	if err != nil {
		return nil, err
	}
	m, err := master.New(mopts, master.Deps{Redis: rdb, Keys: keys, Failures: masterFailures(st, sinks), Metrics: reg, Renderer: rr, Logger: log})
	if err != nil {
		return nil, err
	}
	runners := []func(context.Context) error{m.Run}
	for i := 0; i < cfg.slaves; i++ {
		sopts := slave.DefaultOptions()
		sopts.ID, sopts.Concurrency, sopts.Poll = i, cfg.concurrency, 50*time.Millisecond
		s, err := slave.New(sopts, slave.Deps{Redis: rdb, Keys: keys, Store: st, Sinks: slaveSinks(sinks), Metrics: reg, Renderer: rr, Logger: log})
		if err != nil {
			return nil, err
		}
		runners = append(runners, s.Run)
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	for _, run := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(cctx); err != nil {
				log.Error("cluster process stopped", zap.Error(err))
			}
		}()
	}
	var once sync.Once
	return func() { once.Do(func() { cancel(); wg.Wait() }) }, nil
}
