package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/crawler-dev/crawler/client"
)

// printRounds prints what the job's current round found of the pages it
// stored (and, in an adaptive re-crawl, how many known pages were not due
// and left unchecked), and when the next round starts.
func printRounds(w io.Writer, st *client.Status) {
	if r, ok := st.Rounds[strconv.FormatInt(st.Round, 10)]; ok {
		fmt.Fprintf(w, "  round %d: new %d, changed %d, unchanged %d, not modified %d",
			st.Round, r.New, r.Changed, r.Unchanged, r.NotModified)
		if r.SkippedNotDue > 0 {
			fmt.Fprintf(w, "; not due, not checked %d", r.SkippedNotDue)
		}
		fmt.Fprintln(w)
	}
	if st.NextRoundAt != "" && st.CancelledAt == "" {
		fmt.Fprintf(w, "  next round at %s\n", st.NextRoundAt)
	}
}
