package main

import (
	"bytes"
	"os"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

func newBenchReportCmd() *cobra.Command {
	var output, redisServer, redisURL string
	var quick bool
	var dedupN []int
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Run every benchmark and write docs/benchmarks.md: the machine, the goals, the commands and the tables",
		Long: `report runs bench dedup (at each --dedup-n), bench assign, bench crawl at 0 and
200 ms latency for 1 to 8 slaves, bench hosts at 40, 120 and 1,000 sites,
bench idle and bench memory (among others), each on a Redis of its own
started from --redis-server, and writes one Markdown document: the machine
(CPU, cores, memory, kernel, Go and Redis versions), the goals beside what
was measured, and each benchmark's command line and tables. It takes about
15 minutes on 2 cores; --quick makes every benchmark small, to try it.`,
		Example: `  crawler-bench report -o docs/benchmarks.md
  crawler-bench report --quick -o /tmp/benchmarks.md`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := bench.DefaultReportOptions()
			if quick {
				opts = bench.QuickReportOptions()
			}
			if cmd.Flags().Changed("dedup-n") {
				opts.DedupN = dedupN
			}
			exe, err := crawlerBinary()
			if err != nil {
				return err
			}
			opts.Binary, opts.RedisServer, opts.RedisURL, opts.Progress = exe, redisServer, redisURL, cmd.ErrOrStderr()
			var doc bytes.Buffer
			if err := bench.Report(cmd.Context(), &doc, opts); err != nil {
				return err
			}
			if output == "" || output == "-" {
				_, err := cmd.OutOrStdout().Write(doc.Bytes())
				return err
			}
			return os.WriteFile(output, doc.Bytes(), 0o644)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&output, "output", "o", "", "write the document to this file (default: standard output)")
	fs.StringVar(&redisServer, "redis-server", "redis-server", "redis-server executable started for each benchmark; empty: use --redis")
	fs.StringVar(&redisURL, "redis", defaultRedis, "Redis URL of one server, used when --redis-server is empty")
	fs.BoolVar(&quick, "quick", false, "small benchmarks, to try the report in a minute or two")
	fs.IntSliceVar(&dedupN, "dedup-n", []int{1_000_000, 10_000_000}, "fingerprint counts of the dupefilter comparison")
	return cmd
}
