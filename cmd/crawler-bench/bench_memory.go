package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

func newBenchMemoryCmd() *cobra.Command {
	opts := bench.DefaultMemoryOptions()
	var redisServer string
	limitMiB := opts.Limit >> 20
	format := string(bench.FormatText)
	names := fieldFlags{"Concurrency": "concurrency", "PageBytes": "page-bytes", "Pages": "pages", "Latency": "latency",
		"Limit": "limit-mib", "Timeout": "timeout", "Format": "format", "RedisURL": "redis"}
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Peak resident memory of one slave at a high concurrency on big pages, against a limit",
		Long: `memory starts this binary as a master and one slave at --concurrency, crawls
--pages detail pages of --page-bytes each from a loopback site that answers
after --latency (so that the slave holds --concurrency pages in flight at
once), and prints the slave's peak resident set (VmHWM) against --limit-mib.
It exits non-zero when the slave went over the limit.`,
		Example:      `  crawler-bench memory --concurrency 256 --page-bytes 5242880 --redis-server redis-server`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return processBench(cmd.Context(), format, names, redisServer, opts.RedisURL,
				func(exe string) error { opts.Binary, opts.Limit = exe, limitMiB<<20; return opts.Validate() },
				func(f bench.Format, url string) error {
					opts.RedisURL = url
					return names.name(runMemory(cmd, f, opts))
				})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.RedisURL, "redis", defaultRedis, "Redis URL of one server")
	fs.StringVar(&redisServer, "redis-server", "", "start this redis-server executable on a loopback port for the benchmark alone, instead of using --redis")
	fs.IntVar(&opts.Concurrency, "concurrency", opts.Concurrency, "the slave's --concurrency")
	fs.IntVar(&opts.PageBytes, "page-bytes", opts.PageBytes, "size of every detail page")
	fs.IntVar(&opts.Pages, "pages", opts.Pages, "detail pages crawled")
	fs.DurationVar(&opts.Latency, "latency", opts.Latency, "added to every response, so that pages are in flight at once")
	fs.Int64Var(&limitMiB, "limit-mib", limitMiB, "peak resident set the slave must stay under, in MiB")
	fs.DurationVar(&opts.Timeout, "timeout", opts.Timeout, "limit for the crawl")
	fs.StringVar(&format, "format", format, "output format: text or md (Markdown)")
	return cmd
}

// runMemory runs the memory check and prints its table; it fails when the
// slave went over the limit.
func runMemory(cmd *cobra.Command, f bench.Format, opts bench.MemoryOptions) error {
	res, err := bench.Memory(cmd.Context(), opts)
	if res.Crawl.Pages > 0 {
		_ = bench.WriteMemory(cmd.OutOrStdout(), f, res)
	}
	if err != nil {
		return err
	}
	if !res.Passed() {
		return fmt.Errorf("the slave's peak RSS %d MiB is over the %d MiB limit", res.Crawl.SlavePeakRSS>>20, opts.Limit>>20)
	}
	return nil
}
