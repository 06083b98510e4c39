package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/master"
	"github.com/crawler-dev/crawler/slave"
	"github.com/crawler-dev/crawler/store"
)

func init() { subcommands = append(subcommands, newRunCmd) }

// runConfig is an all-in-one crawl: one master and some slaves in this
// process, on an embedded Redis and a JSON Lines file unless told otherwise.
type runConfig struct {
	redis       string // "" = embedded
	mongo       string // "" = JSON Lines to output
	output      string
	slaves      int
	concurrency int
	timeout     time.Duration
	prefix      string
}

func (c *runConfig) register(cmd *cobra.Command, defaultOutput string) {
	f := cmd.Flags()
	f.StringVar(&c.redis, "redis", "", "Redis URL (default: an embedded in-process Redis)")
	f.StringVar(&c.mongo, "mongo", "", "MongoDB URI (default: write items to --output)")
	f.StringVarP(&c.output, "output", "o", defaultOutput, "JSON Lines file for items when --mongo is not given")
	f.IntVar(&c.slaves, "slaves", 3, "slaves to run in this process")
	f.IntVar(&c.concurrency, "concurrency", 16, "pages each slave fetches at once")
	f.DurationVar(&c.timeout, "timeout", 0, "give up after this long (0: no limit)")
	f.StringVar(&c.prefix, "prefix", cluster.DefaultPrefix, "prefix of every Redis key")
}

func (c *runConfig) validate() error {
	switch {
	case c.slaves < 1 || c.slaves > cluster.DefaultMaxSlaves:
		return fmt.Errorf("--slaves: %d is outside 1..%d", c.slaves, cluster.DefaultMaxSlaves)
	case c.concurrency < 1:
		return fmt.Errorf("--concurrency: %d must be at least 1", c.concurrency)
	case c.mongo == "" && c.output == "":
		return errors.New("-o/--output: an items file is required without --mongo")
	}
	return nil
}

func newRunCmd() *cobra.Command {
	var (
		cfg     runConfig
		jobFile string
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Crawl one job on this machine: master and slaves in one process, no servers needed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := readJobFile(jobFile)
			if err != nil {
				return err
			}
			if err := cfg.validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			st, err := runAllInOne(ctx, cfg, spec, cmd.ErrOrStderr())
			if st != nil {
				printRunSummary(cmd.OutOrStdout(), cfg, st)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&jobFile, "job", "", "job file (YAML)")
	cfg.register(cmd, "items.jsonl")
	return cmd
}

// itemStore is what the master and the slaves write to.
type itemStore interface {
	slave.ItemStore
	master.FailureRecorder
}

// runAllInOne submits spec and crawls it to the end in this process.
func runAllInOne(ctx context.Context, cfg runConfig, spec *cluster.JobSpec, progress io.Writer) (*client.Status, error) {
	if cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
	}
	rdb, closeRedis, err := runRedis(ctx, cfg.redis)
	if err != nil {
		return nil, err
	}
	defer closeRedis()
	st, closeStore, err := runStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer closeStore()

	keys := cluster.Keys{Prefix: cfg.prefix}
	stopCluster, err := startCluster(ctx, cfg, rdb, keys, st)
	if err != nil {
		return nil, err
	}
	defer stopCluster()
	// Submit once every slave is live, or the first to register would be
	// routed all the work of a fast list walk.
	if err := client.WaitSlaves(ctx, rdb, keys, cfg.slaves); err != nil {
		return nil, err
	}
	if err := client.Submit(ctx, rdb, keys, spec); err != nil {
		return nil, err
	}
	line := &progressLine{w: progress}
	status, err := client.Wait(ctx, rdb, keys, spec.Name, cluster.DefaultMaxSlaves, 250*time.Millisecond, line.show)
	line.done()
	if err != nil {
		return status, fmt.Errorf("crawl %s: %w", spec.Name, err)
	}
	return status, nil
}

// runRedis connects to url, or starts an embedded Redis when url is empty.
func runRedis(ctx context.Context, url string) (redis.UniversalClient, func(), error) {
	if url != "" {
		rdb, err := openRedis(ctx, url)
		if err != nil {
			return nil, nil, err
		}
		return rdb, func() { rdb.Close() }, nil
	}
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		return nil, nil, fmt.Errorf("start embedded redis: %w", err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	return rdb, func() { rdb.Close(); mr.Close() }, nil
}

// runStore opens MongoDB when configured, else the JSON Lines file.
func runStore(ctx context.Context, cfg runConfig) (itemStore, func(), error) {
	if cfg.mongo != "" {
		m, err := openMongo(ctx, cfg.mongo)
		if err != nil {
			return nil, nil, err
		}
		return m, func() { _ = m.Close(context.Background()) }, nil
	}
	j, err := store.OpenJSONL(cfg.output)
	if err != nil {
		return nil, nil, fmt.Errorf("-o: %w", err)
	}
	return j, func() {
		if err := j.Close(); err != nil {
			global.logger.Error("close items file", zap.Error(err))
		}
	}, nil
}

// startCluster runs a master and cfg.slaves slaves as goroutines; the
// returned function stops them and waits.
func startCluster(ctx context.Context, cfg runConfig, rdb redis.UniversalClient, keys cluster.Keys, st itemStore) (func(), error) {
	log := global.logger
	m, err := master.New(master.Options{Tick: 250 * time.Millisecond},
		master.Deps{Redis: rdb, Keys: keys, Failures: st, Logger: log})
	if err != nil {
		return nil, err
	}
	runners := []func(context.Context) error{m.Run}
	for i := 0; i < cfg.slaves; i++ {
		s, err := slave.New(slave.Options{ID: i, Concurrency: cfg.concurrency, Poll: 50 * time.Millisecond},
			slave.Deps{Redis: rdb, Keys: keys, Store: batched(st, cfg.concurrency), Logger: log})
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
	return func() { cancel(); wg.Wait() }, nil
}

// progressLine keeps one status line up to date on a terminal.
type progressLine struct {
	w    io.Writer
	last time.Time
	any  bool
}

func (p *progressLine) show(st *client.Status) {
	if p.w == nil || time.Since(p.last) < 500*time.Millisecond {
		return
	}
	p.last = time.Now()
	c := st.Counters
	fmt.Fprintf(p.w, "\r%s round %d: list pages %d, discovered %d, stored %d, failed %d, duplicates %d, queued %d, in flight %d   ",
		st.State, st.Round, c.ListPages, c.Discovered, c.Stored, c.Failed, c.Duplicates, c.Queued, c.InFlight)
	p.any = true
}

func (p *progressLine) done() {
	if p.any {
		fmt.Fprintln(p.w)
	}
}

func printRunSummary(w io.Writer, cfg runConfig, st *client.Status) {
	printStatus(w, st, false)
	if cfg.mongo == "" {
		fmt.Fprintf(w, "items: %s", cfg.output)
		if st.Counters.Failed+st.Counters.ListFailed > 0 {
			fmt.Fprintf(w, "  failures: %s", store.FailuresPath(cfg.output))
		}
		fmt.Fprintln(w)
	}
}
