package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/term"

	"github.com/crawler-dev/crawler/client"
)

// console is where run and demo show their progress. On a terminal it
// keeps one status line at the bottom, cut to the terminal's width and
// redrawn in place, with the logs scrolling above it (the logger writes
// through the console, which clears the line, writes the log, and draws
// the line again). On a pipe or a file it writes a plain progress line now
// and then, between the logs, and no control characters. With JSON logs
// the progress is a log record now and then ("progress", at info level),
// so the stream stays JSON. Quiet shows no progress at all.
type console struct {
	mu       sync.Mutex
	out      io.Writer
	terminal bool
	width    func() int  // the terminal's columns
	log      *zap.Logger // set for JSON logs: progress goes there
	quiet    bool
	line     string    // the status line drawn at the bottom (terminal)
	last     time.Time // when a plain line or record was last written
	every    time.Duration
	started  time.Time
	meter    rateMeter
}

// rate remembers a sample of the stored counter, for pages/s.
type rate struct {
	at     time.Time
	stored int64
}

// newConsole writes to f, drawing on it if it is a terminal.
func newConsole(f *os.File, quiet bool) *console {
	fd := int(f.Fd())
	return &console{out: f, terminal: term.IsTerminal(fd), quiet: quiet, width: terminalWidth(fd),
		every: 5 * time.Second, started: time.Now(), meter: newRateMeter()}
}

// terminalWidth returns a function that reads fd's width, 80 when it
// cannot be read, so a resized window is followed.
func terminalWidth(fd int) func() int {
	return func() int {
		if w, _, err := term.GetSize(fd); err == nil && w > 0 {
			return w
		}
		return 80
	}
}

// logJSON sends the progress to log as records instead of lines: the
// output is JSON logs, which a line of text would break.
func (c *console) logJSON(log *zap.Logger) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log, c.terminal = log, false
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
	now := time.Now()
	c.mu.Lock()
	speed := c.meter.sample(now, st.Counters.Stored)
	elapsed := now.Sub(c.started)
	due := now.Sub(c.last) >= c.every
	if due && !c.terminal {
		c.last = now
	}
	switch {
	case c.terminal:
		c.line = fitLine(progressParts(st, speed, elapsed), c.width()-1)
		fmt.Fprint(c.out, "\r\033[K", c.line)
	case due && c.log == nil:
		fmt.Fprintln(c.out, progressText(st, speed, elapsed))
	}
	log := c.log
	c.mu.Unlock()
	if due && log != nil { // outside the lock: the logger writes through Write
		log.Info("progress", progressFields(st, speed, elapsed)...)
	}
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

// rateMeter turns samples of the stored counter into pages/s, measured
// over a second or more: samples closer to the last measure keep the rate
// it gave, so the rate shows on every line, not only after a fresh one.
type rateMeter struct {
	prev *rate
	last float64 // -1 until the first measure
}

func newRateMeter() rateMeter { return rateMeter{last: -1} }

// sample takes stored at now and returns the rate to show, -1 while
// nothing has been measured yet.
func (m *rateMeter) sample(now time.Time, stored int64) float64 {
	if m.prev == nil {
		m.prev = &rate{at: now, stored: stored}
		return m.last
	}
	if dt := now.Sub(m.prev.at).Seconds(); dt >= 1 {
		m.last = float64(stored-m.prev.stored) / dt
		m.prev = &rate{at: now, stored: stored}
	}
	return m.last
}

// linePart is one piece of the progress line: its text, the group it is
// shown in (groups are separated by " | ") and how long it is kept when
// the line must be cut (the lowest rank goes first).
type linePart struct {
	text  string
	group int
	rank  int
}

// progressParts are the pieces of a progress line: the state, a bar of
// the discovered pages that have an outcome, the counts, the rate, an ETA
// and the time elapsed.
func progressParts(st *client.Status, pagesPerSec float64, elapsed time.Duration) []linePart {
	c := st.Counters
	parts := []linePart{
		{st.State, 0, 10}, {bar(c.Settled(), c.Discovered, 20), 0, 2},
		{fmt.Sprintf("%3.0f%%", percent(c.Settled(), c.Discovered)), 0, 9},
		{fmt.Sprintf("list %d", c.ListPages), 1, 0},
		{fmt.Sprintf("discovered %d", c.Discovered), 2, 6}, {fmt.Sprintf("stored %d", c.Stored), 2, 8},
		{fmt.Sprintf("failed %d", c.Failed), 2, 5}, {fmt.Sprintf("skipped %d", c.Skipped), 2, 1},
		{fmt.Sprintf("dup %d", c.Duplicates), 2, 1},
	}
	if c.Cancelled > 0 {
		parts = append(parts, linePart{fmt.Sprintf("cancelled %d", c.Cancelled), 2, 4})
	}
	parts = append(parts, linePart{fmt.Sprintf("queued %d in flight %d", c.Queued, c.InFlight), 3, 3})
	if pagesPerSec >= 0 {
		parts = append(parts, linePart{fmt.Sprintf("%.0f pages/s", pagesPerSec), 4, 7})
		if eta, ok := etaOf(c, pagesPerSec); ok {
			parts = append(parts, linePart{"eta " + eta.String(), 4, 7})
		}
	}
	return append(parts, linePart{elapsed.Round(time.Second).String(), 5, 4})
}

// etaOf is how long the pages queued and in flight take at pagesPerSec.
func etaOf(c client.Counters, pagesPerSec float64) (time.Duration, bool) {
	left := c.Queued + c.InFlight
	if pagesPerSec <= 0 || left <= 0 {
		return 0, false
	}
	return (time.Duration(float64(left)/pagesPerSec) * time.Second).Round(time.Second), true
}

// progressText is one whole line of progress, for a pipe.
func progressText(st *client.Status, pagesPerSec float64, elapsed time.Duration) string {
	return joinParts(progressParts(st, pagesPerSec, elapsed))
}

// fitLine joins parts into a line of at most width characters, leaving
// out the lowest-ranked parts first; a line still too long is cut.
func fitLine(parts []linePart, width int) string {
	width = max(width, 1)
	parts = append([]linePart(nil), parts...)
	line := joinParts(parts)
	for len(line) > width && len(parts) > 1 {
		low := 0
		for i, p := range parts {
			if p.rank < parts[low].rank {
				low = i
			}
		}
		parts = append(parts[:low], parts[low+1:]...)
		line = joinParts(parts)
	}
	if len(line) > width {
		line = line[:width]
	}
	return line
}

// joinParts writes the parts of a group with spaces between them and
// " | " between groups.
func joinParts(parts []linePart) string {
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i == 0:
		case p.group != parts[i-1].group:
			b.WriteString(" | ")
		default:
			b.WriteString(" ")
		}
		b.WriteString(p.text)
	}
	return b.String()
}

// progressFields are the progress as log fields, for JSON logs.
func progressFields(st *client.Status, pagesPerSec float64, elapsed time.Duration) []zap.Field {
	c := st.Counters
	fields := []zap.Field{zap.String("job", st.Job), zap.String("state", st.State),
		zap.Float64("percent", percent(c.Settled(), c.Discovered)), zap.Int64("list_pages", c.ListPages),
		zap.Int64("discovered", c.Discovered), zap.Int64("stored", c.Stored), zap.Int64("failed", c.Failed),
		zap.Int64("skipped", c.Skipped), zap.Int64("duplicates", c.Duplicates), zap.Int64("cancelled", c.Cancelled),
		zap.Int64("queued", c.Queued), zap.Int64("in_flight", c.InFlight), zap.Duration("elapsed", elapsed)}
	if pagesPerSec >= 0 {
		fields = append(fields, zap.Float64("pages_per_second", pagesPerSec))
		if eta, ok := etaOf(c, pagesPerSec); ok {
			fields = append(fields, zap.Duration("eta", eta))
		}
	}
	return fields
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
