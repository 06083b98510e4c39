package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/internal/bench"
)

func init() { benchCommands = append(benchCommands, newBenchDedupCmd) }

func newBenchDedupCmd() *cobra.Command {
	var opts bench.DedupOptions
	var redisURL string
	cmd := &cobra.Command{
		Use:   "dedup",
		Short: "Compare dupefilter methods on a Redis: checks/s and bytes per fingerprint",
		Long: `dedup inserts --n URL fingerprints into the bloom, exact and set modes of the
dupefilter (batched Lua check-and-insert, --batch per call) and times them,
times the bloom mode again with every slice of the window full, times the
scrapy-redis-bloomfilter method (k GETBIT then k SETBIT, one round trip each)
on 20,000 URLs, and prints Redis bytes per fingerprint (INFO used_memory
delta) beside the Bloom optimum. Keys go under a random prefix and are
deleted afterwards. Runs capped by time stop after --duration.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rdb, err := openRedis(cmd.Context(), redisURL)
			if err != nil {
				return err
			}
			defer rdb.Close()
			report, err := bench.Dedup(cmd.Context(), rdb, opts)
			if err != nil {
				return err
			}
			return bench.WriteDedup(cmd.OutOrStdout(), report)
		},
	}
	f := cmd.Flags()
	f.StringVar(&redisURL, "redis", defaultRedis, "Redis URL: redis://[user:pass@]host:port/db")
	f.IntVar(&opts.N, "n", 1_000_000, "fingerprints each mode inserts (and the bloom slice capacity)")
	f.IntVar(&opts.Batch, "batch", 1000, "fingerprints per script call")
	f.DurationVar(&opts.Duration, "duration", 10*time.Second, "time cap of each throughput-only run")
	return cmd
}
