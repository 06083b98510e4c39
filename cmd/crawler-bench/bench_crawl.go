package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

// benchCrawlFlags maps the crawl benchmark's option fields to its flags.
var benchCrawlFlags = fieldFlags{"Details": "details", "DetailsPerSlave": "details-per-slave", "Slaves": "slaves",
	"Concurrency": "concurrency", "Hosts": "hosts", "Latency": "latency", "PageBytes": "page-bytes", "PerPage": "per-page",
	"Seeds": "seeds", "Timeout": "timeout", "RedisURL": "redis", "Format": "format"}

func newBenchCrawlCmd() *cobra.Command {
	opts := bench.DefaultCrawlOptions()
	var redisServer string
	format := string(bench.FormatText)
	cmd := &cobra.Command{
		Use:   "crawl",
		Short: "Pages per second and cost per page (CPU, Redis commands, round trips, memory) of real master and slave processes on a loopback site",
		Long: `crawl starts this binary as one master and N slaves for each cluster size in
--slaves, crawls a demo site served on --hosts loopback addresses (127.0.0.1,
127.0.0.2, ...: hosts of their own to the politeness budget) with --latency
added to every response, and prints pages/s beside the cost per page: CPU of
the crawler processes (/proc/<pid>/stat) and of Redis (INFO), Redis commands
(INFO commandstats, script-internal ones included), the commands and round
trips each process sent (a loopback proxy per process counts them on the
wire), and the slaves' peak RSS; then where the commands come from, by
command. --redis-server starts a Redis of the benchmark's own, so that no
other client's traffic lands in Redis's numbers.`,
		Example: `  crawler-bench crawl --details 4000 --slaves 1,2,4,8 --hosts 8
  crawler-bench crawl --latency 200ms --hosts 4 --slaves 1,2,4 --concurrency 8 --details-per-slave 600 --redis-server redis-server
  crawler-bench crawl --details 300 --slaves 1 --format md`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return processBench(cmd.Context(), format, benchCrawlFlags, redisServer, opts.RedisURL,
				func(exe string) error { opts.Binary = exe; return opts.Validate() },
				func(f bench.Format, url string) error {
					opts.RedisURL = url
					results, err := bench.Crawl(cmd.Context(), opts)
					if len(results) > 0 {
						_ = bench.WriteCrawl(cmd.OutOrStdout(), f, opts, results)
					}
					return benchCrawlFlags.name(err)
				})
		},
	}
	fs := cmd.Flags()
	registerCrawlFlags(fs, &opts)
	fs.StringVar(&redisServer, "redis-server", "", "start this redis-server executable on a loopback port for the benchmark alone, instead of using --redis")
	fs.StringVar(&format, "format", format, "output format: text or md (Markdown)")
	return cmd
}

// registerCrawlFlags registers the flags of a crawl benchmark's options.
func registerCrawlFlags(fs *pflag.FlagSet, opts *bench.CrawlOptions) {
	fs.StringVar(&opts.RedisURL, "redis", defaultRedis, "Redis URL of one server")
	fs.IntVar(&opts.Details, "details", opts.Details, "detail pages on the loopback site, spread over the hosts")
	fs.IntVar(&opts.DetailsPerSlave, "details-per-slave", 0, "size the site to this many detail pages per slave instead (0: use --details)")
	fs.IntSliceVar(&opts.Slaves, "slaves", opts.Slaves, "cluster sizes to measure")
	fs.IntVar(&opts.Concurrency, "concurrency", opts.Concurrency, "each slave's --concurrency")
	fs.IntVar(&opts.Hosts, "hosts", opts.Hosts, fmt.Sprintf("loopback hosts the site is spread over, 127.0.0.1 up to 127.0.0.%d", bench.MaxHosts))
	fs.DurationVar(&opts.Latency, "latency", opts.Latency, "added to every response of the site, like a real site's latency")
	fs.IntVar(&opts.PageBytes, "page-bytes", 0, "pad every detail page to this many bytes (0: about 2 KB)")
	fs.IntVar(&opts.PerPage, "per-page", 0, "detail links on each list page (0: the demo site's 25); with --seeds first, a host yields at most this many links per list-page latency")
	fs.StringVar(&opts.Seeds, "seeds", opts.Seeds, "all: seed every list page; first: each host's first list page, walked breadth-first by the master")
	fs.BoolVar(&opts.Tap, "tap", opts.Tap, "count each process's commands and round trips with a loopback proxy in front of Redis")
	fs.DurationVar(&opts.Timeout, "timeout", opts.Timeout, "limit for one crawl")
	fs.StringVar(&opts.MongoURI, "mongo", "", "store items to this MongoDB (a fresh database per run is best) instead of JSON Lines files")
}
