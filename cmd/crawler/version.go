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
	info, _ := debug.ReadBuildInfo() // nil without build info
	return versionOf(version, info)
}

// versionOf is versionString for a given -X version and build info (nil
// when the binary carries none). Without a vcs.revision (go build with
// -buildvcs=false, or outside a git tree) it says the commit is unknown,
// unless the version was set at build time: make build sets it from git
// describe, which names the commit.
func versionOf(v string, info *debug.BuildInfo) string {
	rev := ""
	if info != nil {
		if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		rev = revision(info.Settings)
	}
	if rev == "" && v == "dev" {
		rev = " (commit unknown: built without VCS info; use make build)"
	}
	return fmt.Sprintf("%s%s %s", v, rev, runtime.Version())
}

// revision is " commit REV", with "+modified" when the tree had
// uncommitted changes, or "" when the build recorded no commit.
func revision(settings []debug.BuildSetting) string {
	rev, modified := "", false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	switch {
	case rev == "":
		return ""
	case modified:
		return " commit " + rev + "+modified"
	}
	return " commit " + rev
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
