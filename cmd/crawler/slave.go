package main

import (
	"context"
	"errors"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/slave"
)

func init() { subcommands = append(subcommands, newSlaveCmd) }

func newSlaveCmd() *cobra.Command {
	var (
		cf     clusterFlags
		mongo  string
		output string
		opts   slave.Options
	)
	cmd := &cobra.Command{
		Use:   "slave",
		Short: "Fetch the detail pages routed to this slave's ID and store items",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Set from a flag, CRAWLER_ID or the config file, it is Changed.
			if !cmd.Flags().Changed("id") {
				return errors.New("--id: required (0 <= id < --max-slaves)")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			opts.MaxSlaves = cf.maxSlaves
			if err := opts.Validate(); err != nil {
				return err
			}
			return runSlave(ctx, cf, mongo, output, opts)
		},
	}
	cf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&mongo, "mongo", defaultMongo, "MongoDB URI; the path names the database")
	f.StringVar(&output, "output", "", "write items and failures to this JSON Lines file instead of MongoDB")
	f.IntVar(&opts.ID, "id", -1, "this slave's stable ID, 0 <= id < --max-slaves (required)")
	f.IntVar(&opts.Concurrency, "concurrency", 32, "pages fetched at once")
	f.Float64Var(&opts.Weight, "weight", 0, "capacity relative to other slaves (default: --concurrency)")
	f.DurationVar(&opts.TaskLease, "task-lease", 0, "how long a task may be held before it is handed out again (default 1m)")
	return cmd
}

func runSlave(ctx context.Context, cf clusterFlags, mongoURI, output string, opts slave.Options) error {
	rdb, st, closeAll, err := openProcess(ctx, cf, mongoURI, output)
	if err != nil {
		return err
	}
	defer closeAll()
	s, err := slave.New(opts, slave.Deps{Redis: rdb, Keys: cf.keys(), Store: batched(st, opts.Concurrency), Logger: global.logger})
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Run(ctx)
}
