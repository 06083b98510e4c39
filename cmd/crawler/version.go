package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=..."; a
// binary built without it reports the module version go install recorded.
var version = "dev"

// versionString is what crawler --version and crawler version print: the
// version, the commit it was built from (marked when the tree had
// uncommitted changes) and the Go release.
func versionString() string {
	v, rev := version, ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = " commit " + s.Value
			case "vcs.modified":
				if s.Value == "true" {
					rev += "+modified"
				}
			}
		}
	}
	return fmt.Sprintf("%s%s %s", v, rev, runtime.Version())
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the crawler's version",
		Example: "  crawler version\n  crawler --version",
		Args:    cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "crawler %s\n", versionString())
		},
	}
}
