package main

import (
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/internal/proctmp"
)

// tempUsers are the commands that may start a headless browser or a
// private redis-server, whose temporary directories go in the process's
// own (proctmp).
var tempUsers = map[string]bool{"run": true, "demo": true, "master": true, "slave": true, "check": true}

// openTemp makes the process's temporary directory, for a command that
// may need one, after removing those of crawler processes that were
// killed before they could (kill -9 leaves the browser's profile and the
// redis-server's directory behind). A crawler that cannot make it runs
// on with the system's temporary directory.
func (a *app) openTemp(cmd *cobra.Command) {
	if !tempUsers[cmd.Name()] || cmd.Parent() != cmd.Root() || a.tmp != nil {
		return
	}
	d, err := proctmp.Open("")
	if err != nil {
		a.logger.Warn("no temporary directory of this process's own; its files go in the system's", zap.Error(err))
		return
	}
	if len(d.Removed) > 0 { // housekeeping, nothing to act on: before a clear error, it would only be in the way
		a.logger.Debug("removed the temporary directories of crawler processes that are gone", zap.Strings("dirs", d.Removed))
	}
	a.tmp = d
}

// closeTemp removes the process's temporary directory, if it made one.
func (a *app) closeTemp() {
	if err := a.tmp.Close(); err != nil {
		a.logger.Warn("remove this process's temporary directory", zap.Error(err))
	}
	a.tmp = nil
}
