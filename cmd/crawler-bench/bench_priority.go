package main

import (
	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

// benchPriorityFlags maps the priority benchmark's option fields to its flags.
var benchPriorityFlags = fieldFlags{"High": "high", "Low": "low", "Lists": "lists", "Priority": "priority", "Latency": "latency",
	"Slaves": "slaves", "Concurrency": "concurrency", "Timeout": "timeout", "RedisURL": "redis", "Format": "format"}

func newBenchPriorityCmd() *cobra.Command {
	opts := bench.DefaultPriorityOptions()
	var redisServer string
	format := string(bench.FormatText)
	cmd := &cobra.Command{
		Use:   "priority",
		Short: "How many low-priority pages are stored before the last high-priority one, with priorities and without",
		Long: `priority serves a loopback site whose list pages (all seeds) link --high pages
of one kind and --low of another, interleaved, each answered after --latency,
and crawls it with one master and --slaves slaves of this binary, a fresh
cluster each time, in two shapes: one job of two item kinds (the high kind at
--priority), and two jobs on the same slaves (the low pages' job submitted
first, the high pages' job at --priority). Each shape runs with priorities
and without (every page at 0: the naive baseline, the order found). It prints
how many low pages were stored when the last high page was, and when.`,
		Example: `  crawler-bench priority
  crawler-bench priority --high 200 --low 1000 --redis-server redis-server`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return processBench(cmd.Context(), format, benchPriorityFlags, redisServer, opts.RedisURL,
				func(exe string) error { opts.Binary = exe; return opts.Validate() },
				func(f bench.Format, url string) error {
					opts.RedisURL = url
					rep, err := bench.Priority(cmd.Context(), opts)
					if len(rep.Runs) > 0 {
						_ = bench.WritePriority(cmd.OutOrStdout(), f, rep)
					}
					return benchPriorityFlags.name(err)
				})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.RedisURL, "redis", defaultRedis, "Redis URL of one server")
	fs.StringVar(&redisServer, "redis-server", "", "start this redis-server executable on a loopback port for the benchmark alone, instead of using --redis")
	fs.IntVar(&opts.High, "high", opts.High, "pages of high priority")
	fs.IntVar(&opts.Low, "low", opts.Low, "pages of low priority")
	fs.IntVar(&opts.Lists, "lists", opts.Lists, "list pages linking them, all seeds")
	fs.IntVar(&opts.Priority, "priority", opts.Priority, "the high kind's (or job's) priority; the low one's is 0")
	fs.DurationVar(&opts.Latency, "latency", opts.Latency, "added to every detail page's answer")
	fs.IntVar(&opts.Slaves, "slaves", opts.Slaves, "the cluster's slaves")
	fs.IntVar(&opts.Concurrency, "concurrency", opts.Concurrency, "each slave's --concurrency")
	fs.DurationVar(&opts.Timeout, "timeout", opts.Timeout, "limit for each crawl")
	fs.StringVar(&format, "format", format, "output format: text or md (Markdown)")
	return cmd
}
