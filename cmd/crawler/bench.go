package main

import "github.com/spf13/cobra"

// benchCommands are the `crawler bench ...` subcommands, each registered by
// its own file.
var benchCommands []func() *cobra.Command

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the crawler's components and print comparison tables",
	}
	for _, add := range benchCommands {
		cmd.AddCommand(add())
	}
	return cmd
}
