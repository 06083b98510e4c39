package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/client"
)

// client status prints what the current round found and when the next
// round starts (issue 21).
func TestPrintStatus_rounds(t *testing.T) {
	t.Parallel()
	st := &client.Status{Job: "nightly", State: "finished", Round: 2, NextRoundAt: "2026-01-03T03:00:00Z",
		Rounds: map[string]client.RoundCounts{"1": {New: 300}, "2": {Changed: 30, NotModified: 70, SkippedNotDue: 200}}}
	var b bytes.Buffer
	printStatus(&b, st, false)
	for _, want := range []string{"round 2: new 0, changed 30, unchanged 0, not modified 70; not due, not checked 200",
		"next round at 2026-01-03T03:00:00Z"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("client status printed:\n%s\nwant a line with %q", b.String(), want)
		}
	}
}
