package main

import (
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

func newBenchProxyCmd() *cobra.Command {
	var (
		redisURL string
		opts     = bench.DefaultProxyOptions()
	)
	cmd := &cobra.Command{
		Use:     "proxy",
		Short:   "Cost of a proxy pick and its report in Redis, and validation throughput",
		Example: "  crawler-bench proxy --redis redis://127.0.0.1:6379/0",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			rdb, err := bench.DialRedis(ctx, redisURL)
			if err != nil {
				return err
			}
			defer rdb.Close()
			report, err := bench.ProxyPool(ctx, rdb, cluster.Keys{Prefix: "bench-proxy"}, opts)
			if err != nil {
				return err
			}
			return report.WriteTable(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&redisURL, "redis", defaultRedis, "Redis URL of one server")
	return cmd
}
