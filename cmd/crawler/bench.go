package main

import "github.com/spf13/cobra"

func newBenchCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the crawler's components and print comparison tables",
	}
	cmd.AddCommand(newBenchDedupCmd(), newBenchAssignCmd(), newBenchCrawlCmd(), newBenchProxyCmd(),
		newBenchIdleCmd(), newBenchMemoryCmd(), newBenchReportCmd())
	return cmd
}
