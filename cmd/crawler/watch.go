package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
)

// watch draws a job's status live for client status --watch: on a terminal
// the whole view is redrawn in place each second (progress bar, rate, ETA,
// a table per slave, what "in flight" counts), every line within 80
// columns; on a pipe one plain line is written per update.
type watch struct {
	out      io.Writer
	terminal bool
	started  time.Time
	samples  []rate     // stored over the last ten seconds, for the rate
	width    func() int // the terminal's columns; nil: watchWidth
}

func newWatch(out io.Writer) *watch {
	w := &watch{out: out, started: time.Now()}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		w.terminal, w.width = true, terminalWidth(int(f.Fd()))
	}
	return w
}

// columns is how wide a line of the view may be: watchWidth, or the
// terminal's width when it is narrower.
func (w *watch) columns() int {
	if w.width == nil {
		return watchWidth
	}
	return max(10, min(watchWidth, w.width()))
}

// watchWidth is the terminal width the view fits: every line of it is at
// most this many columns.
const watchWidth = 80

// inFlightNote says what the IN FLIGHT column counts.
var inFlightNote = []string{
	"  IN FLIGHT: tasks a slave has leased: being fetched, or waiting for",
	"  their host's turn (rate, concurrency cap, pause), robots.txt or a proxy.",
}

// watchDone is when --watch stops: once the job is finished; for a job
// between rounds when the watch began, once its next round is.
func watchDone() func(*client.Status) bool {
	target := int64(-1)
	return func(st *client.Status) bool {
		if target < 0 {
			target = st.Round
			if st.BetweenRounds() {
				target++
			}
		}
		return st.State == cluster.StateFinished && (st.CancelledAt != "" || st.Round >= target)
	}
}

// nextRoundText says when a job between rounds starts its next one, or
// "" for a job that is not between rounds.
func nextRoundText(st *client.Status, now time.Time) string {
	if !st.BetweenRounds() {
		return ""
	}
	at, err := time.Parse(time.RFC3339Nano, st.NextRoundAt)
	if err != nil {
		return fmt.Sprintf("round %d due at %s", st.Round+1, st.NextRoundAt)
	}
	return fmt.Sprintf("round %d due at %s (in %s)", st.Round+1, at.Local().Format("15:04:05"),
		max(0, at.Sub(now)).Round(time.Second))
}

// show draws st.
func (w *watch) show(st *client.Status) {
	now := time.Now()
	w.samples = append(w.samples, rate{at: now, stored: st.Counters.Stored})
	for len(w.samples) > 1 && now.Sub(w.samples[0].at) > 10*time.Second {
		w.samples = w.samples[1:]
	}
	speed := w.rate()
	if !w.terminal {
		fmt.Fprintln(w.out, pipeLine(st, speed, now, now.Sub(w.started)))
		return
	}
	fmt.Fprint(w.out, "\033[H\033[2J") // home, clear
	for _, line := range frame(st, speed, now) {
		fmt.Fprintln(w.out, cut(line, w.columns()))
	}
}

// indent indents a line of the view; an empty one stays empty.
func indent(s string) string {
	if s == "" {
		return ""
	}
	return "  " + s
}

// pipeLine is one line of the view on a pipe: the time and the progress,
// within watchWidth columns.
func pipeLine(st *client.Status, speed float64, now time.Time, elapsed time.Duration) string {
	clock := now.Format("15:04:05")
	parts := progressParts(st, speed, elapsed)
	if next := nextRoundText(st, now); next != "" {
		parts = append([]linePart{{next, 0, 11}}, parts...)
	}
	return clock + " " + fitLine(parts, watchWidth-len(clock)-1)
}

// frame is the terminal view of st: lines of at most watchWidth columns.
func frame(st *client.Status, speed float64, now time.Time) []string {
	c := st.Counters
	head := fmt.Sprintf("job %s: %s, round %d", st.Job, st.State, st.Round)
	clock := now.Format("15:04:05")
	head = cut(head, watchWidth-len(clock)-2)
	lines := []string{
		head + strings.Repeat(" ", watchWidth-utf8.RuneCountInString(head)-len(clock)) + clock,
		indent(nextRoundText(st, now)),
		fmt.Sprintf("  %s %5.1f%%  %s of %s settled", bar(c.Settled(), c.Discovered, 30),
			percent(c.Settled(), c.Discovered), count(c.Settled()), count(c.Discovered)),
		"  " + speedText(speed, c.Queued+c.InFlight),
		"",
		fmt.Sprintf("  stored %s  failed %s  skipped %s  duplicates %s", count(c.Stored), count(c.Failed),
			count(c.Skipped), count(c.Duplicates)),
		fmt.Sprintf("  near-duplicates %s  retries %s  list pages %s (failed %s)", count(c.NearDuplicates),
			count(c.Retries), count(c.ListPages), count(c.ListFailed)),
		"",
	}
	lines = append(lines, slaveTable(st)...)
	lines = append(lines, "")
	lines = append(lines, inFlightNote...)
	lines = append(lines, "", "  Ctrl-C stops watching; the job goes on.")
	for i, l := range lines {
		lines[i] = cut(l, watchWidth)
	}
	return lines
}

// speedText is the rate and, while there is work left, how long it takes.
func speedText(speed float64, left int64) string {
	s := fmt.Sprintf("%.1f pages/s", speed)
	if speed > 0 && left > 0 {
		eta := (time.Duration(float64(left)/speed) * time.Second).Round(time.Second)
		s += fmt.Sprintf(", about %s left for %s queued and in flight", eta, count(left))
	}
	return s
}

// slaveTable is a table of the job's slaves.
func slaveTable(st *client.Status) []string {
	ids := make([]int, 0, len(st.Slaves))
	for id := range st.Slaves {
		n, _ := strconv.Atoi(id)
		ids = append(ids, n)
	}
	sort.Ints(ids)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  SLAVE\tROUTED\tSTORED\tFAILED\tQUEUED\tIN FLIGHT\t")
	for _, id := range ids {
		s := st.Slaves[strconv.Itoa(id)]
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t\n", id, count(s.Routed), count(s.Stored), count(s.Failed),
			count(s.Queued), count(s.InFlight))
	}
	_ = tw.Flush()
	return strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
}

// count writes n short: 987, 12.3k, 4.5M.
func count(n int64) string {
	switch {
	case n < 10_000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	case n < 1_000_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
	}
	return strconv.FormatFloat(float64(n)/1e9, 'f', 1, 64) + "G"
}

// cut shortens s to width columns, ending it with "…" when cut.
func cut(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return string(r[:width-1]) + "…"
}

// rate is pages stored per second over the samples.
func (w *watch) rate() float64 {
	if len(w.samples) < 2 {
		return 0
	}
	first, last := w.samples[0], w.samples[len(w.samples)-1]
	dt := last.at.Sub(first.at).Seconds()
	if dt <= 0 {
		return 0
	}
	return float64(last.stored-first.stored) / dt
}

// done ends the view on a new line.
func (w *watch) done() {
	if w.terminal {
		fmt.Fprintln(w.out)
	}
}
