package bench

import (
	"fmt"
	"os/exec"
)

// busyLoops are processes that keep cores busy while a benchmark runs, to
// measure on a busy machine: each a shell spinning in a loop of its own.
type busyLoops []*exec.Cmd

// startBusyLoops starts n spinning shells.
func startBusyLoops(n int) (busyLoops, error) {
	var b busyLoops
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			b.stop()
			return nil, fmt.Errorf("start a busy loop: %w", err)
		}
		b = append(b, cmd)
	}
	return b, nil
}

// stop kills each loop, by its own process, and waits for it.
func (b busyLoops) stop() {
	for _, cmd := range b {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}
