package main

import (
	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

func newBenchAssignCmd() *cobra.Command {
	var opts bench.AssignOptions
	format := string(bench.FormatText)
	cmd := &cobra.Command{
		Use:     "assign",
		Short:   "Compare URL-to-slave routing schemes: speed, balance, keys moved on a leave or join",
		Example: `  crawler-bench assign --slots 64 --slaves 10 --keys 1000000`,
		Long: `assign routes URL fingerprints over n slaves of a virtual node table of --slots
slots with our two-level hash (rendezvous second level), the paper's (live[h%n]), jump
consistent hash and hash rings, then again after one slave leaves and after
one joins, and prints routes/s, balance (max/mean) and the share of keys moved
next to the ideal (1/n on a leave, 1/(n+1) on a join).`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := bench.Format(format)
			if err := f.Validate(); err != nil {
				return fieldFlags{"Format": "format"}.name(err)
			}
			report, err := bench.Assign(opts)
			if err != nil {
				return err
			}
			return bench.WriteAssign(cmd.OutOrStdout(), f, report)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Slots, "slots", 64, "slots of the virtual node table: the most slaves (--max-slaves)")
	f.IntVar(&opts.Slaves, "slaves", 10, "live slaves n, IDs 0..n-1")
	f.IntVar(&opts.Keys, "keys", 1_000_000, "URL fingerprints to route")
	f.StringVar(&format, "format", format, "output format: text or md (Markdown)")
	return cmd
}
