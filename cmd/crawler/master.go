package main

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/master"
)

func init() { subcommands = append(subcommands, newMasterCmd) }

func newMasterCmd() *cobra.Command {
	var (
		cf     clusterFlags
		mongo  string
		output string
		opts   master.Options
	)
	cmd := &cobra.Command{
		Use:   "master",
		Short: "Coordinate crawls: walk list pages breadth-first, dedup and route detail pages to slaves",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			opts.MaxSlaves = cf.maxSlaves
			if err := opts.Validate(); err != nil {
				return err
			}
			return runMaster(ctx, cf, mongo, output, opts)
		},
	}
	cf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&mongo, "mongo", defaultMongo, "MongoDB URI; the path names the database")
	f.StringVar(&output, "output", "", "write failures to this JSON Lines file instead of MongoDB")
	f.StringVar(&opts.ID, "id", "", "name of this master in job leases (default host:pid)")
	f.IntVar(&opts.ListConcurrency, "list-concurrency", 4, "list pages fetched at once per job")
	f.StringVar(&opts.AssignMode, "assign-mode", "rendezvous", "second level of the assigner: rendezvous or paper")
	f.Float64Var(&opts.MaxWeight, "max-weight", master.DefaultMaxWeight, "assigner weight scale, the same on every master: slaves of this --weight or more keep all URLs of their own slot")
	f.DurationVar(&opts.JobLease, "job-lease", 0, "how long a job stays owned without renewal (default 10s)")
	return cmd
}

func runMaster(ctx context.Context, cf clusterFlags, mongoURI, output string, opts master.Options) error {
	rdb, st, closeAll, err := openProcess(ctx, cf, mongoURI, output)
	if err != nil {
		return err
	}
	defer closeAll()
	m, err := master.New(opts, master.Deps{Redis: rdb, Keys: cf.keys(), Failures: st, Logger: global.logger})
	if err != nil {
		return err
	}
	defer m.Close()
	return m.Run(ctx)
}
