package main

import (
	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

// benchRecrawlFlags maps the recrawl benchmark's option fields to its flags.
var benchRecrawlFlags = fieldFlags{"MongoURI": "mongo", "Pages": "pages", "ChangePercent": "change-percent", "Rounds": "rounds", "Every": "every",
	"Slaves": "slaves", "Concurrency": "concurrency", "Timeout": "timeout", "RedisURL": "redis", "Format": "format"}

func newBenchRecrawlCmd() *cobra.Command {
	opts := bench.DefaultRecrawlOptions()
	var redisServer string
	format := string(bench.FormatText)
	cmd := &cobra.Command{
		Use:   "recrawl",
		Short: "What an adaptive re-crawl fetches and catches beside checking every page each round",
		Long: `recrawl serves two loopback shops of --pages products, --change-percent of which
change every round (the same ones; the others never), and crawls them in
rounds (recrawl_every --every) with one master and --slaves slaves of this
binary: one job checks every product each round, the other has
recrawl: {mode: adaptive, min: --every, max: 30d}. It prints, over rounds 2
to --rounds, the product requests each made, their share of checking
everything, and how many of the changes each caught in the round they were
made.`,
		Example: `  crawler-bench recrawl
  crawler-bench recrawl --pages 400 --rounds 30 --redis-server redis-server`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return processBench(cmd.Context(), format, benchRecrawlFlags, redisServer, opts.RedisURL,
				func(exe string) error { opts.Binary = exe; return opts.Validate() },
				func(f bench.Format, url string) error {
					opts.RedisURL = url
					rep, err := bench.Recrawl(cmd.Context(), opts)
					if len(rep.Runs) > 0 {
						_ = bench.WriteRecrawl(cmd.OutOrStdout(), f, rep)
					}
					return benchRecrawlFlags.name(err)
				})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.RedisURL, "redis", defaultRedis, "Redis URL of one server")
	fs.StringVar(&redisServer, "redis-server", "", "start this redis-server executable on a loopback port for the benchmark alone, instead of using --redis")
	fs.StringVar(&opts.MongoURI, "mongo", "", "store items to this MongoDB (a fresh database per run is best), where the pages' schedules are shared by the slaves, instead of a JSON Lines file per slave")
	fs.IntVar(&opts.Pages, "pages", opts.Pages, "products of each shop")
	fs.IntVar(&opts.ChangePercent, "change-percent", opts.ChangePercent, "share of the products that change every round")
	fs.IntVar(&opts.Rounds, "rounds", opts.Rounds, "rounds each job runs")
	fs.DurationVar(&opts.Every, "every", opts.Every, "recrawl_every of both jobs, and the adaptive one's recrawl.min (whole seconds)")
	fs.IntVar(&opts.Slaves, "slaves", opts.Slaves, "the cluster's slaves")
	fs.IntVar(&opts.Concurrency, "concurrency", opts.Concurrency, "each slave's --concurrency")
	fs.DurationVar(&opts.Timeout, "timeout", opts.Timeout, "limit for the whole benchmark")
	fs.StringVar(&format, "format", format, "output format: text or md (Markdown)")
	return cmd
}
