package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/crawler-dev/crawler/client"
)

// console is where run and demo show their progress. On a terminal it
// keeps one status line at the bottom, redrawn in place, with the logs
// scrolling above it (the logger writes through the console, which clears
// the line, writes the log, and draws the line again). On a pipe or a file
// it writes a plain progress line now and then, between the logs, and no
// control characters. Quiet shows no progress at all.
type console struct {
	mu       sync.Mutex
	out      io.Writer
	terminal bool
	quiet    bool
	line     string    // the status line drawn at the bottom (terminal)
	last     time.Time // when a plain line was last written (pipe)
	every    time.Duration
	started  time.Time
	prev     *rate
}

// rate remembers a sample of the stored counter, for pages/s.
type rate struct {
	at     time.Time
	stored int64
}

// newConsole writes to f, drawing on it if it is a terminal.
func newConsole(f *os.File, quiet bool) *console {
	return &console{out: f, terminal: term.IsTerminal(int(f.Fd())), quiet: quiet,
		every: 5 * time.Second, started: time.Now()}
}

// Write writes log output above the status line.
func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.terminal || c.line == "" {
		return c.out.Write(p)
	}
	fmt.Fprint(c.out, "\r\033[K")
	n, err := c.out.Write(p)
	fmt.Fprint(c.out, c.line)
	return n, err
}

// Sync is a no-op: the console writes through.
func (c *console) Sync() error { return nil }

// show takes a new status of the job.
func (c *console) show(st *client.Status) {
	if c.quiet || st == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	line := progressText(st, c.pagesPerSecond(now, st.Counters.Stored), now.Sub(c.started))
	if c.terminal {
		c.line = line
		fmt.Fprint(c.out, "\r\033[K", line)
		return
	}
	if now.Sub(c.last) >= c.every {
		c.last = now
		fmt.Fprintln(c.out, line)
	}
}

// pagesPerSecond is the stored rate since the last sample a second or more
// ago.
func (c *console) pagesPerSecond(now time.Time, stored int64) float64 {
	if c.prev == nil {
		c.prev = &rate{at: now, stored: stored}
		return 0
	}
	dt := now.Sub(c.prev.at).Seconds()
	if dt < 1 {
		return -1 // keep the last shown rate
	}
	r := float64(stored-c.prev.stored) / dt
	c.prev = &rate{at: now, stored: stored}
	return r
}

// done clears the status line for what follows.
func (c *console) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.terminal && c.line != "" {
		fmt.Fprint(c.out, "\r\033[K")
		c.line = ""
	}
}

// progressText is one line of progress: a bar of the discovered pages that
// have an outcome, the counts, the rate and an ETA.
func progressText(st *client.Status, pagesPerSec float64, elapsed time.Duration) string {
	c := st.Counters
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %3.0f%% | list %d | discovered %d stored %d failed %d skipped %d dup %d | queued %d in flight %d",
		st.State, bar(c.Settled(), c.Discovered, 20), percent(c.Settled(), c.Discovered), c.ListPages,
		c.Discovered, c.Stored, c.Failed, c.Skipped, c.Duplicates, c.Queued, c.InFlight)
	if pagesPerSec >= 0 {
		fmt.Fprintf(&b, " | %.0f pages/s", pagesPerSec)
		if left := c.Queued + c.InFlight; pagesPerSec > 0 && left > 0 {
			fmt.Fprintf(&b, " eta %s", (time.Duration(float64(left)/pagesPerSec) * time.Second).Round(time.Second))
		}
	}
	fmt.Fprintf(&b, " | %s", elapsed.Round(time.Second))
	return b.String()
}

// bar draws done of total in width cells.
func bar(done, total int64, width int) string {
	filled := 0
	if total > 0 {
		filled = int(min(done, total) * int64(width) / total)
	}
	return "[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "]"
}

func percent(done, total int64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(min(done, total)) / float64(total)
}
