package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/crawler-dev/crawler/client"
)

// printBudget writes what the job's budget did, if anything: the budget
// that ended its round, the links each budget refused and the hosts that
// reached max_pages_per_host.
func printBudget(w io.Writer, st *client.Status) {
	c := st.Counters
	var refused []string
	for _, b := range []struct {
		name string
		n    int64
	}{{"max_pages", c.SkippedMaxPages}, {"max_pages_per_host", c.SkippedMaxPagesPerHost},
		{"max_bytes", c.SkippedMaxBytes}, {"max_duration", c.SkippedMaxDuration}} {
		if b.n > 0 {
			refused = append(refused, fmt.Sprintf("%s %d", b.name, b.n))
		}
	}
	if st.BudgetReached == "" && len(refused) == 0 && c.HostsClosed == 0 {
		return
	}
	line := "  budget"
	if st.BudgetReached != "" {
		line += fmt.Sprintf(": %s reached, nothing more admitted", st.BudgetReached)
	}
	if len(refused) > 0 {
		line += "; links skipped past it: " + strings.Join(refused, ", ")
	}
	if c.HostsClosed > 0 {
		line += fmt.Sprintf("; hosts closed at max_pages_per_host %d", c.HostsClosed)
	}
	fmt.Fprintln(w, line)
}
