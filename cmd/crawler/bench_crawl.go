package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/internal/bench"
)

func init() { benchCommands = append(benchCommands, newBenchCrawlCmd) }

func newBenchCrawlCmd() *cobra.Command {
	opts := bench.CrawlOptions{}
	cmd := &cobra.Command{
		Use:   "crawl",
		Short: "Pages per second and CPU time per page of real master and slave processes on a loopback site",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find the crawler binary: %w", err)
			}
			opts.Binary = exe
			results, err := bench.Crawl(cmd.Context(), opts)
			if len(results) > 0 {
				_ = bench.WriteCrawl(cmd.OutOrStdout(), opts, results)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.RedisURL, "redis", defaultRedis, "Redis URL")
	f.IntVar(&opts.Details, "details", 5000, "detail pages on the loopback site")
	f.IntSliceVar(&opts.Slaves, "slaves", []int{1, 3}, "cluster sizes to measure")
	f.IntVar(&opts.Concurrency, "concurrency", 32, "each slave's --concurrency")
	f.DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "limit for one crawl")
	f.StringVar(&opts.MongoURI, "mongo", "", "store items to this MongoDB (a fresh database per run is best) instead of JSON Lines files")
	return cmd
}
