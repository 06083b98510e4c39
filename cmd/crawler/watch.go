package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/crawler-dev/crawler/client"
)

// watch draws a job's status live for client status --watch: on a terminal
// the whole view is redrawn in place each second (progress bar, rate, ETA,
// a table per slave); on a pipe one plain line is written per update.
type watch struct {
	out      io.Writer
	terminal bool
	started  time.Time
	samples  []rate // stored over the last ten seconds, for the rate
}

func newWatch(out io.Writer) *watch {
	w := &watch{out: out, started: time.Now()}
	if f, ok := out.(*os.File); ok {
		w.terminal = term.IsTerminal(int(f.Fd()))
	}
	return w
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
		fmt.Fprintf(w.out, "%s %s\n", now.Format("15:04:05"), progressText(st, speed, now.Sub(w.started)))
		return
	}
	fmt.Fprint(w.out, "\033[H\033[2J") // home, clear
	c := st.Counters
	fmt.Fprintf(w.out, "job %s: %s, round %d   (%s, Ctrl-C to stop watching)\n\n", st.Job, st.State, st.Round,
		now.Format("15:04:05"))
	fmt.Fprintf(w.out, "  %s %5.1f%%  %d of %d discovered pages settled\n", bar(c.Settled(), c.Discovered, 40),
		percent(c.Settled(), c.Discovered), c.Settled(), c.Discovered)
	fmt.Fprintf(w.out, "  %.1f pages/s", speed)
	if left := c.Queued + c.InFlight; speed > 0 && left > 0 {
		fmt.Fprintf(w.out, ", about %s for the %d queued and in flight", (time.Duration(float64(left)/speed) * time.Second).Round(time.Second), left)
	}
	fmt.Fprintf(w.out, "\n\n  stored %d  failed %d  skipped %d  duplicates %d  near-duplicates %d  retries %d  list pages %d (failed %d)\n\n",
		c.Stored, c.Failed, c.Skipped, c.Duplicates, c.NearDuplicates, c.Retries, c.ListPages, c.ListFailed)
	w.slaves(st)
}

// slaves writes a table of the job's slaves.
func (w *watch) slaves(st *client.Status) {
	ids := make([]int, 0, len(st.Slaves))
	for id := range st.Slaves {
		n, _ := strconv.Atoi(id)
		ids = append(ids, n)
	}
	sort.Ints(ids)
	tw := tabwriter.NewWriter(w.out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  SLAVE\tROUTED\tSTORED\tFAILED\tQUEUED\tIN FLIGHT\t")
	for _, id := range ids {
		s := st.Slaves[strconv.Itoa(id)]
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%d\t%d\t%d\t\n", id, s.Routed, s.Stored, s.Failed, s.Queued, s.InFlight)
	}
	_ = tw.Flush()
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
