package main

import (
	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

func newBenchIdleCmd() *cobra.Command {
	opts := bench.DefaultIdleOptions()
	var redisServer string
	format := string(bench.FormatText)
	names := fieldFlags{"Slaves": "slaves", "Duration": "duration", "Timeout": "timeout", "Format": "format", "RedisURL": "redis"}
	cmd := &cobra.Command{
		Use:   "idle",
		Short: "What a cluster with no job running costs Redis: commands and round trips per second per node",
		Long: `idle starts this binary as one master and --slaves slaves, lets them settle,
and measures for --duration what they cost Redis with no job: Redis commands
per second (INFO commandstats, script-internal ones included) in all and per
node, Redis's CPU, and the commands and round trips each process sent (a
loopback proxy per process counts them on the wire); then, with --after-job,
the same once a small job has finished. --redis-server starts a Redis of the
benchmark's own.`,
		Example:      `  crawler-bench idle --slaves 4 --duration 10s --redis-server redis-server`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return processBench(cmd.Context(), format, names, redisServer, opts.RedisURL,
				func(exe string) error { opts.Binary = exe; return opts.Validate() },
				func(f bench.Format, url string) error {
					opts.RedisURL = url
					results, err := bench.Idle(cmd.Context(), opts)
					if len(results) > 0 {
						_ = bench.WriteIdle(cmd.OutOrStdout(), f, results)
					}
					return names.name(err)
				})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.RedisURL, "redis", defaultRedis, "Redis URL of one server")
	fs.StringVar(&redisServer, "redis-server", "", "start this redis-server executable on a loopback port for the benchmark alone, instead of using --redis")
	fs.IntVar(&opts.Slaves, "slaves", opts.Slaves, "slaves started beside the master")
	fs.DurationVar(&opts.Duration, "duration", opts.Duration, "how long each idle phase is measured")
	fs.BoolVar(&opts.AfterJob, "after-job", opts.AfterJob, "measure again once a small job has finished")
	fs.BoolVar(&opts.Tap, "tap", opts.Tap, "count each process's commands and round trips with a loopback proxy in front of Redis")
	fs.DurationVar(&opts.Timeout, "timeout", opts.Timeout, "limit for the whole benchmark")
	fs.StringVar(&format, "format", format, "output format: text or md (Markdown)")
	return cmd
}
