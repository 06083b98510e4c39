package main

import (
	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

// benchSiteFlags maps the one-site benchmark's option fields to its flags.
var benchSiteFlags = fieldFlags{"Details": "details", "PerPage": "per-page", "NextLinks": "next-links",
	"FaultEvery": "fault-every", "Stall": "stall", "Latencies": "latency", "Rounds": "rounds", "Slaves": "slaves",
	"PerHostRPS": "per-host-rps", "PerHostConcurrency": "per-host-concurrency", "Crawlers": "crawlers",
	"Timeout": "timeout", "Format": "format", "Postgres": "postgres", "Stages": "stages"}

func newBenchSiteCmd() *cobra.Command {
	opts := bench.DefaultSiteOptions()
	format := string(bench.FormatText)
	cmd := &cobra.Command{
		Use:   "site",
		Short: "One site walked from its first list page, with faults: the cluster and `crawler run` beside colly, interleaved",
		Long: `site serves one loopback site whose list pages each link the next three (a
breadth-first walk about 100 levels deep from the first), one detail page in
--fault-every faulty (a 404, a 503 once or twice, a connection reset, a stall
of --stall), at each --latency; and crawls it, round after round, with one
master and --slaves slaves on a redis-server of the benchmark's own, with
` + "`crawler run`" + ` on its defaults, and with colly v2 (Async, Parallelism
--per-host-concurrency, its robots.txt handling, retries), built at the start
from its own module in --peer-dir. It prints each crawler's pages/s beside
colly's, the CPU, Redis CPU and Redis commands per page, peak RSS, and the
bound: the least time any crawler with that many slots of the site can take.`,
		Example: `  crawler-bench site                                        # 0 and 20 ms, 3 rounds
  crawler-bench site --latency 0 --rounds 1 --details 400   # a quick look`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := bench.Format(format)
			if err := f.Validate(); err != nil {
				return benchSiteFlags.name(err)
			}
			exe, err := crawlerBinary()
			if err != nil {
				return err
			}
			opts.Binary, opts.Progress = exe, cmd.ErrOrStderr()
			if err := opts.Validate(); err != nil {
				return benchSiteFlags.name(err)
			}
			rep, err := bench.Site(cmd.Context(), opts)
			if len(rep.Runs) > 0 {
				_ = bench.WriteSite(cmd.OutOrStdout(), f, rep)
			}
			return benchSiteFlags.name(err)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&opts.Details, "details", opts.Details, "detail pages on the site")
	fs.IntVar(&opts.PerPage, "per-page", opts.PerPage, "detail links on each list page")
	fs.IntVar(&opts.NextLinks, "next-links", opts.NextLinks, "list pages each list page links")
	fs.IntVar(&opts.FaultEvery, "fault-every", opts.FaultEvery, "every n-th detail page is faulty (0: none)")
	fs.DurationVar(&opts.Stall, "stall", opts.Stall, "how long a stalling page takes")
	fs.DurationSliceVar(&opts.Latencies, "latency", opts.Latencies, "the site's latencies, each measured")
	fs.IntVar(&opts.Rounds, "rounds", opts.Rounds, "rounds of every crawler at each latency")
	fs.IntVar(&opts.Slaves, "slaves", opts.Slaves, "the cluster's slaves")
	fs.Float64Var(&opts.PerHostRPS, "per-host-rps", opts.PerHostRPS, "the job's per_host_rps")
	fs.IntVar(&opts.PerHostConcurrency, "per-host-concurrency", opts.PerHostConcurrency, "the job's per_host_concurrency, and colly's Parallelism")
	fs.StringSliceVar(&opts.Crawlers, "crawlers", opts.Crawlers, "crawlers measured: cluster, run, colly, and run with one sink: run-postgres, run-kafka, run-s3, run-warc")
	fs.StringVar(&opts.Postgres, "postgres", opts.Postgres, "PostgreSQL server the run-postgres crawls write to, a table each")
	fs.StringVar(&opts.RedisServer, "redis-server", opts.RedisServer, "redis-server executable the cluster's Redis is started from")
	fs.StringVar(&opts.PeerDir, "peer-dir", opts.PeerDir, "the colly peer's Go module, built with `go build` at the start")
	fs.DurationVar(&opts.Timeout, "timeout", opts.Timeout, "limit for one crawl")
	fs.BoolVar(&opts.Tap, "tap", opts.Tap, "count the cluster's commands by role and script with a loopback proxy in front of Redis, and print them per page")
	fs.BoolVar(&opts.Stages, "stages", opts.Stages, "profile every crawler process (crawler --cpu-profile) and print the cluster's and `crawler run`'s CPU per page by stage: fetch, decode, parse, extract, hash, store, coordinate")
	fs.StringVar(&format, "format", format, "output format: text or md (Markdown)")
	return cmd
}
