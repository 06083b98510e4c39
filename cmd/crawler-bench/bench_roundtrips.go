package main

import (
	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

func newBenchRoundTripsCmd() *cobra.Command {
	var redisServer string
	redisURL := defaultRedis
	format := string(bench.FormatText)
	names := fieldFlags{"Format": "format", "RedisURL": "redis"}
	cmd := &cobra.Command{
		Use:   "roundtrips",
		Short: "What one round trip costs Redis's CPU: back to back, after a pause, pipelined",
		Long: `roundtrips calls an empty script on Redis three ways: one round trip each,
back to back; one round trip each, 5 ms apart, so that each finds Redis
asleep, as the calls of a lightly loaded cluster do; and 32 to a pipeline.
It prints Redis's CPU time per call (INFO used_cpu_user + used_cpu_sys): what
a round trip costs Redis besides the work it carries, which is why a
cluster's Redis CPU per page falls as its load rises. --redis-server starts
a Redis of the benchmark's own, so that no other client's traffic lands in
its numbers.`,
		Example:      `  crawler-bench roundtrips --redis-server redis-server`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return processBench(cmd.Context(), format, names, redisServer, redisURL,
				nil,
				func(f bench.Format, url string) error {
					ways, err := bench.RoundTrips(cmd.Context(), url)
					if err != nil {
						return err
					}
					return bench.WriteTables(cmd.OutOrStdout(), f, bench.RoundTripTable(ways))
				})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&redisURL, "redis", defaultRedis, "Redis URL of one server")
	fs.StringVar(&redisServer, "redis-server", "", "start this redis-server executable on a loopback port for the benchmark alone, instead of using --redis")
	fs.StringVar(&format, "format", format, "output format: text or md (Markdown)")
	return cmd
}
