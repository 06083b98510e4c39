package main

import "github.com/spf13/cobra"

func newBenchCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the crawler's components and print comparison tables",
		Example: `  crawler bench dedup --redis redis://127.0.0.1:6379/0 --format md
  crawler bench assign --slots 64 --slaves 10 --keys 1000000
  crawler bench crawl --details 4000 --slaves 1,2,4,8 --hosts 8
  crawler bench report -o docs/benchmarks.md     # all of them, each on a Redis of its own (make bench)`,
	}
	cmd.AddCommand(newBenchDedupCmd(), newBenchAssignCmd(), newBenchCrawlCmd(), newBenchProxyCmd(),
		newBenchIdleCmd(), newBenchMemoryCmd(), newBenchRoundTripsCmd(), newBenchReportCmd(), newBenchSiteCmd())
	return cmd
}
