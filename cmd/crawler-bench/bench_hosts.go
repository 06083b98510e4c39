package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

// benchHostsFlags maps the many-host benchmark's option fields to its flags.
var benchHostsFlags = fieldFlags{"Hosts": "hosts", "Slaves": "slaves", "DetailsPerHost": "details-per-host",
	"ListPages": "list-pages", "Latency": "latency", "FaultEvery": "fault-every", "Rounds": "rounds",
	"BusyLoops": "busy-loops", "Timeout": "timeout", "Tap": "tap", "RedisURL": "redis", "Format": "format"}

func newBenchHostsCmd() *cobra.Command {
	opts := bench.DefaultHostsOptions()
	var redisServer string
	format := string(bench.FormatText)
	cmd := &cobra.Command{
		Use:   "hosts",
		Short: "Many small sites at once on the job file's politeness defaults: pages/s against the politeness bound, Redis and CPU per page, and what each host saw",
		Long: `hosts serves H small sites from this process, one per loopback address
(127.0.0.2, 127.0.0.3, ..., then 127.0.1.1, ...: each a host of its own to the
politeness budget), each --details-per-host detail pages behind --list-pages
list pages chained by next links, --latency added to every response, one
detail page in --fault-every faulty, a robots.txt allowing everything and a
redirect loop (/loop/1 -> /loop/2 -> /loop/3 -> /loop/1) linked from its list
pages. One job seeds every site's first list page and keeps the job file's
politeness defaults (no per_host_rps, no per_host_concurrency); one master and
each --slaves count of slaves crawl it, items to JSON Lines files.

Each row prints the pages stored exactly once against those expected, the
wall time and pages/s against the politeness bound (the busiest host's
requests as the site counted them, every redirect hop included, over the
default rate), Redis commands and CPU per stored page, the crawler's CPU per
page, and the site's own view: the most requests any host had in flight at
once and within any one second, and how many hosts went over the cap or
over rate + burst. --busy-loops keeps that many shells spinning throughout,
to measure on a busy machine.`,
		Example: `  crawler-bench hosts --hosts 40,120 --slaves 3 --redis-server redis-server
  crawler-bench hosts --hosts 120 --slaves 1,3,8 --redis-server redis-server --format md
  crawler-bench hosts --hosts 40 --busy-loops 2 --rounds 3`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return processBench(cmd.Context(), format, benchHostsFlags, redisServer, opts.RedisURL,
				func(exe string) error {
					opts.Binary, opts.Progress = exe, cmd.ErrOrStderr()
					return opts.Validate()
				},
				func(f bench.Format, url string) error {
					opts.RedisURL = url
					rep, err := bench.Hosts(cmd.Context(), opts)
					if len(rep.Runs) > 0 {
						_ = bench.WriteHosts(cmd.OutOrStdout(), f, rep)
					}
					return benchHostsFlags.name(err)
				})
		},
	}
	fs := cmd.Flags()
	fs.IntSliceVar(&opts.Hosts, "hosts", opts.Hosts, fmt.Sprintf("numbers of sites measured, each on loopback addresses of its own (up to %d)", bench.MaxManyHosts))
	fs.IntSliceVar(&opts.Slaves, "slaves", opts.Slaves, "cluster sizes measured at each number of sites")
	fs.IntVar(&opts.DetailsPerHost, "details-per-host", opts.DetailsPerHost, "detail pages of each site")
	fs.IntVar(&opts.ListPages, "list-pages", opts.ListPages, "list pages of each site, each linking the next")
	fs.DurationVar(&opts.Latency, "latency", opts.Latency, "added to every response of the sites")
	fs.IntVar(&opts.FaultEvery, "fault-every", opts.FaultEvery, "every n-th detail page is faulty (0: none)")
	fs.IntVar(&opts.Rounds, "rounds", opts.Rounds, "how often each row is measured")
	fs.IntVar(&opts.BusyLoops, "busy-loops", 0, "shells spinning in a loop throughout, to measure on a busy machine")
	fs.BoolVar(&opts.Tap, "tap", false, "count each process's commands and round trips with a loopback proxy in front of Redis")
	fs.DurationVar(&opts.Timeout, "timeout", opts.Timeout, "limit for one crawl")
	fs.StringVar(&opts.RedisURL, "redis", defaultRedis, "Redis URL of one server")
	fs.StringVar(&redisServer, "redis-server", "", "start this redis-server executable on a loopback port for the benchmark alone, instead of using --redis")
	fs.StringVar(&format, "format", format, "output format: text or md (Markdown)")
	return cmd
}
