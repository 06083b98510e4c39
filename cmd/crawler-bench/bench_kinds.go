package main

import (
	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

// benchKindsFlags maps the kinds benchmark's option fields to its flags.
var benchKindsFlags = fieldFlags{"Pages": "pages", "Slaves": "slaves", "Concurrency": "concurrency",
	"PerPage": "per-page", "Rounds": "rounds", "Timeout": "timeout", "RedisURL": "redis", "Format": "format"}

func newBenchKindsCmd() *cobra.Command {
	opts := bench.DefaultKindsOptions()
	var redisServer string
	format := string(bench.FormatText)
	cmd := &cobra.Command{
		Use:   "kinds",
		Short: "What the crawl model of page kinds costs: the demo shop beside the two-kind crawl of as many pages",
		Long: `kinds crawls, with one master and --slaves slaves of this binary, the demo site
with its two-kind job (next_link, detail_link) and the demo shop with its job of
page kinds (categories, paginated lists, a JSON API, products with typed fields
and related links), each storing --pages pages from one loopback host without
faults or latency, --rounds times each, taking turns. It prints, for each
shape's median run, the requests, list pages, item links discovered and
duplicates (the work the crawl had), pages/s and the cost per page: CPU of
the crawler processes and of Redis, Redis commands and round trips; then
where the commands come from.`,
		Example: `  crawler-bench kinds
  crawler-bench kinds --pages 400 --rounds 1 --redis-server redis-server`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return processBench(cmd.Context(), format, benchKindsFlags, redisServer, opts.RedisURL,
				func(exe string) error { opts.Binary = exe; return opts.Validate() },
				func(f bench.Format, url string) error {
					opts.RedisURL = url
					rep, err := bench.Kinds(cmd.Context(), opts)
					if len(rep.Runs) > 0 {
						_ = bench.WriteKinds(cmd.OutOrStdout(), f, rep)
					}
					return benchKindsFlags.name(err)
				})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.RedisURL, "redis", defaultRedis, "Redis URL of one server")
	fs.StringVar(&redisServer, "redis-server", "", "start this redis-server executable on a loopback port for the benchmark alone, instead of using --redis")
	fs.IntVar(&opts.Pages, "pages", opts.Pages, "pages each crawl stores (rounded up to a multiple of the shop's 20 sub-categories)")
	fs.IntVar(&opts.Slaves, "slaves", opts.Slaves, "the cluster's slaves")
	fs.IntVar(&opts.Concurrency, "concurrency", opts.Concurrency, "each slave's --concurrency")
	fs.IntVar(&opts.PerPage, "per-page", opts.PerPage, "links to items on each list page of both sites")
	fs.IntVar(&opts.Rounds, "rounds", opts.Rounds, "crawls of each shape, taking turns")
	fs.BoolVar(&opts.Tap, "tap", opts.Tap, "count each process's commands and round trips with a loopback proxy in front of Redis")
	fs.DurationVar(&opts.Timeout, "timeout", opts.Timeout, "limit for one crawl")
	fs.StringVar(&format, "format", format, "output format: text or md (Markdown)")
	return cmd
}
