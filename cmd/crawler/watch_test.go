package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/crawler-dev/crawler/client"
)

// TestWatch_fits80Columns (issue 18): the terminal view of
// `client status --watch` fits an 80-column terminal whatever the
// numbers and the job's name, and says what "in flight" counts.
func TestWatch_fits80Columns(t *testing.T) {
	t.Parallel()
	big := client.Counters{ListPages: 123_456, ListFailed: 7_890, Discovered: 98_765_432, Duplicates: 1_234_567,
		Stored: 45_678_901, Failed: 2_345_678, Skipped: 345_678, NearDuplicates: 456_789, Retries: 5_678_901,
		Queued: 3_456_789, InFlight: 12_345}
	st := &client.Status{Job: strings.Repeat("a-very-long-job-name-", 5), State: "running", Round: 12345,
		Counters: big, Slaves: map[string]client.SlaveCounts{}}
	for _, id := range []string{"0", "7", "1023"} {
		st.Slaves[id] = client.SlaveCounts{Routed: 99_999_999, Stored: 88_888_888, Failed: 7_777_777,
			Queued: 6_666_666, InFlight: 55_555}
	}
	var out bytes.Buffer
	w := &watch{out: &out, terminal: true, started: time.Now()}
	w.samples = []rate{{at: time.Now().Add(-5 * time.Second), stored: big.Stored - 12_345}}
	w.show(st)
	view := strings.TrimPrefix(out.String(), "\033[H\033[2J")
	lines := strings.Split(strings.TrimRight(view, "\n"), "\n")
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line %d is %d columns: %q", i+1, n, l)
		}
	}
	for _, want := range []string{"IN FLIGHT: tasks a slave has leased: being fetched, or waiting",
		"their host's turn", "SLAVE", "1023", "pages/s"} {
		if !strings.Contains(view, want) {
			t.Errorf("the view lacks %q:\n%s", want, view)
		}
	}
	if testing.Verbose() {
		os.Stdout.WriteString(view)
	}
}
