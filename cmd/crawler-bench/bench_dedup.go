package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

func newBenchDedupCmd() *cobra.Command {
	var opts bench.DedupOptions
	var redisURL, redisServer string
	format := string(bench.FormatText)
	cmd := &cobra.Command{
		Use:   "dedup",
		Short: "Compare dupefilter methods on a Redis: checks/s and bytes per fingerprint",
		Example: `  crawler-bench dedup --n 1000000 --redis-server redis-server
  crawler-bench dedup --redis redis://127.0.0.1:6379/0 --format md`,
		Long: `dedup inserts --n URL fingerprints into the bloom, exact and set modes of the
dupefilter (batched Lua check-and-insert, --batch per call) and times them,
times the bloom mode again with every slice of the window full, times the
scrapy-redis-bloomfilter method (k GETBIT then k SETBIT, one round trip each)
on 20,000 URLs, and prints Redis bytes per fingerprint (INFO used_memory
delta) beside the Bloom optimum. Keys go under a random prefix and are
deleted afterwards. Runs capped by time stop after --duration. --redis-server
starts a Redis of the benchmark's own, so that no other client's keys or
traffic land in the numbers.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := bench.Format(format)
			if err := f.Validate(); err != nil {
				return fieldFlags{"Format": "format"}.name(err)
			}
			url, stop, err := bench.UseRedis(cmd.Context(), redisServer, redisURL)
			if err != nil {
				return err
			}
			defer stop()
			rdb, err := bench.DialRedis(cmd.Context(), url)
			if err != nil {
				return err
			}
			defer rdb.Close()
			report, err := bench.Dedup(cmd.Context(), rdb, opts)
			if err != nil {
				return err
			}
			return bench.WriteDedup(cmd.OutOrStdout(), f, report)
		},
	}
	f := cmd.Flags()
	f.StringVar(&redisURL, "redis", defaultRedis, "Redis URL: redis://[user:pass@]host:port/db")
	f.IntVar(&opts.N, "n", 1_000_000, "fingerprints each mode inserts (and the bloom slice capacity)")
	f.IntVar(&opts.Batch, "batch", 1000, "fingerprints per script call")
	f.DurationVar(&opts.Duration, "duration", 10*time.Second, "time cap of each throughput-only run")
	f.StringVar(&redisServer, "redis-server", "", "start this redis-server executable on a loopback port for the benchmark alone, instead of using --redis")
	f.StringVar(&format, "format", format, "output format: text or md (Markdown)")
	return cmd
}
