package main

import (
	"context"
	"errors"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/slave"
)

func newSlaveCmd(a *app) *cobra.Command {
	var (
		cf     clusterFlags
		mf     metricsFlag
		sf     sinkFlags
		mongo  string
		output string
		opts   = slave.DefaultOptions()
	)
	cmd := &cobra.Command{
		Use:   "slave",
		Short: "Fetch the detail pages routed to this slave's ID and store items",
		Example: `  crawler slave --id 0 --redis redis://10.0.0.1:6379/0 --mongo mongodb://10.0.0.2:27017/crawler
  crawler slave --id 1 --concurrency 64 --redis ... --mongo ...     # a bigger host gets a bigger share
  crawler slave --id 2 --output items-2.jsonl --redis ...           # items to a file instead of MongoDB
  crawler slave --id 3 --redis ... --mongo ... --sink postgres://crawler@10.0.0.3/crawl   # and to PostgreSQL`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Set from a flag, CRAWLER_ID or the config file, it is Changed.
			if !cmd.Flags().Changed("id") {
				return errors.New("--id: required (0 <= id < --max-slaves)")
			}
			if err := errors.Join(cf.validate(), mf.validate(), sf.validate()); err != nil {
				return err
			}
			opts.MaxSlaves = cf.maxSlaves
			if err := opts.Validate(); err != nil {
				return cf.fields.name(err)
			}
			if opts.MaxMemory > 0 {
				debug.SetMemoryLimit(opts.MaxMemory) // the collector works harder before the process goes over
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runSlave(ctx, a, cf, mf, sf, mongo, output, opts)
		},
	}
	cf.register(cmd)
	mf.register(cmd)
	sf.register(cmd)
	a.render.register(cmd)
	f, fl := cmd.Flags(), cf.fields
	f.StringVar(&mongo, "mongo", defaultMongo, "MongoDB URI; the path names the database")
	f.StringVar(&output, "output", "", "write items and failures to this JSON Lines file instead of MongoDB (appended to when it exists)")
	f.IntVar(&opts.ID, fl.flag("ID", "id"), -1, "this slave's stable ID, 0 <= id < --max-slaves (required)")
	f.IntVar(&opts.Concurrency, fl.flag("Concurrency", "concurrency"), opts.Concurrency, "pages fetched at once, 1..10000")
	f.Float64Var(&opts.Weight, fl.flag("Weight", "weight"), opts.Weight, "capacity relative to other slaves (0: --concurrency)")
	f.DurationVar(&opts.TaskLease, fl.flag("TaskLease", "task-lease"), opts.TaskLease, "how long a task may be held without renewal before it is handed out again")
	f.DurationVar(&opts.PriorityAging, fl.flag("PriorityAging", "priority-aging"), opts.PriorityAging, "how long a job, or a band of a job's queue, waits to gain one priority (no priority starves)")
	f.Var(byteSize{&opts.MaxMemory}, fl.flag("MaxMemory", "max-memory"), "memory the slave stays within (e.g. 512MiB, 2GiB; 0: no bound): half of it bounds the pages held at once")
	return cmd
}

func runSlave(ctx context.Context, a *app, cf clusterFlags, mf metricsFlag, sf sinkFlags, mongoURI, output string, opts slave.Options) error {
	p, err := openProcess(ctx, cf, mongoURI, output)
	if err != nil {
		return err
	}
	defer p.close(a.logger)
	reg, err := mf.registry()
	if err != nil {
		return err
	}
	instrument(p.rdb, reg, metrics.RoleSlave, opts.ID)
	sinks, err := sf.open(ctx, reg, a.logger)
	if err != nil {
		return err
	}
	defer closeSinks(sinks, a.logger)
	rr, err := a.render.get(a.logger, reg)
	if err != nil {
		return err
	}
	defer a.render.close()
	s, err := slave.New(opts, slave.Deps{Redis: p.rdb, Keys: cf.keys(), Store: p.store, Sinks: slaveSinks(sinks), Metrics: reg, Renderer: rr, Logger: a.logger})
	if err != nil {
		return cf.fields.name(err)
	}
	serveMetrics, err := mf.serve(ctx, reg, a.logger)
	if err != nil {
		return err
	}
	counter := newSinkCounter(sinks, p.rdb, cf.keys(), a.logger)
	defer counter.flushLast(ctx)
	return runServices(ctx, s.Run, serveMetrics, counter.run)
}
