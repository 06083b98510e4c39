package render

import (
	"fmt"
	"os"
)

// Options configures a Renderer. Start from DefaultOptions.
type Options struct {
	// Browser is the Chromium binary: a path, or a name looked up on PATH.
	Browser string
	// Tabs is how many pages render at once (--render-concurrency).
	Tabs int
	// MaxMemory is the resident memory, in bytes, of the browser and its
	// child processes past which the browser is restarted once its
	// renderings end, and past which, while pages render, the page that
	// holds the most is stopped with ErrMemory (memory.go); 0 means no
	// cap.
	MaxMemory int64
	// NoSandbox runs Chromium without its sandbox, which it refuses to
	// start with as root.
	NoSandbox bool
}

// DefaultBrowser is the browser a Renderer starts unless told otherwise.
const DefaultBrowser = "chromium"

// DefaultOptions returns the defaults: chromium from PATH, 2 tabs, a 2 GiB
// memory cap, and no sandbox when the process runs as root.
func DefaultOptions() Options {
	return Options{Browser: DefaultBrowser, Tabs: 2, MaxMemory: 2 << 30, NoSandbox: os.Geteuid() == 0}
}

// Validate reports the first option out of range.
func (o Options) Validate() error {
	switch {
	case o.Browser == "":
		return fmt.Errorf("render: Browser is empty (a path or a name on PATH, e.g. %s)", DefaultBrowser)
	case o.Tabs < 1 || o.Tabs > 256:
		return fmt.Errorf("render: Tabs %d is outside 1..256", o.Tabs)
	case o.MaxMemory < 0:
		return fmt.Errorf("render: MaxMemory %d is negative", o.MaxMemory)
	}
	return nil
}
