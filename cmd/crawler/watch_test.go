package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
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

// TestWatch_narrowTerminal: on a terminal narrower than 80 columns, the
// view's lines fit its width.
func TestWatch_narrowTerminal(t *testing.T) {
	t.Parallel()
	st := &client.Status{Job: "news", State: "running", Round: 1, Counters: client.Counters{Discovered: 10, Stored: 5},
		Slaves: map[string]client.SlaveCounts{"0": {Routed: 10, Stored: 5}}}
	var out bytes.Buffer
	w := &watch{out: &out, terminal: true, started: time.Now(), width: func() int { return 50 }}
	w.show(st)
	for _, l := range strings.Split(strings.TrimPrefix(out.String(), "\033[H\033[2J"), "\n") {
		if n := utf8.RuneCountInString(l); n > 50 {
			t.Errorf("line of %d columns on a 50-column terminal: %q", n, l)
		}
	}
}

// TestWatch_pipeFits80Columns: on a pipe, each line of --watch fits 80
// columns whatever the numbers, the time included.
func TestWatch_pipeFits80Columns(t *testing.T) {
	t.Parallel()
	big := client.Counters{ListPages: 123_456, ListFailed: 7_890, Discovered: 98_765_432, Duplicates: 1_234_567,
		Stored: 45_678_901, Failed: 2_345_678, Skipped: 345_678, Cancelled: 4_567, Queued: 3_456_789, InFlight: 12_345}
	for _, st := range []*client.Status{
		{Job: "news", State: "running", Round: 12, Counters: big},
		{Job: "news", State: "finished", Round: 12, Counters: big, NextRoundAt: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)},
	} {
		var out bytes.Buffer
		w := &watch{out: &out, started: time.Now().Add(-3 * time.Hour)}
		w.samples = []rate{{at: time.Now().Add(-5 * time.Second), stored: big.Stored - 12_345}}
		w.show(st)
		line := strings.TrimRight(out.String(), "\n")
		if n := utf8.RuneCountInString(line); n > 80 || !strings.Contains(line, "stored 45678901") {
			t.Errorf("pipe line of %d columns: %q; want at most 80, with the stored count", n, line)
		}
		if st.NextRoundAt != "" && !strings.Contains(line, "round 13 due at") {
			t.Errorf("pipe line of a job between rounds: %q; want when round 13 is due", line)
		}
	}
}

// TestWatch_betweenRounds: --watch on a scheduled job between rounds
// keeps watching, saying when the next round is due, until that round
// ends.
func TestWatch_betweenRounds(t *testing.T) {
	t.Parallel()
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := client.New(rdb, client.Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := jobspec.Parse(strings.NewReader("name: sched\nseeds: [\"https://example.com/\"]\n" +
		"detail_link: {css: a}\nfields: {t: {css: h1}}\nrecrawl_every: 1h\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Submit(ctx, spec); err != nil {
		t.Fatal(err)
	}
	state, stats := keys.Job("sched").State(), keys.Job("sched").Stats()
	rdb.HSet(ctx, stats, cluster.StatRouted, 3, cluster.StatStored, 3)
	rdb.HSet(ctx, state, cluster.StateField, cluster.StateFinished, cluster.StateRound, 2,
		cluster.StateNextRoundAt, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))

	root := newRootCmd()
	out := &syncBuffer{}
	root.SetOut(out)
	root.SetArgs([]string{"client", "status", "--job", "sched", "--watch", "--redis", testenv.RedisURL(), "--prefix", keys.Prefix})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	testenv.Eventually(t, 30*time.Second, "the watch to say when round 3 is due", func() bool {
		return strings.Contains(out.String(), "round 3 due at")
	})
	select {
	case err := <-done:
		t.Fatalf("--watch ended between rounds: %v\n%s", err, out.String())
	default:
	}
	rdb.HSet(ctx, state, cluster.StateField, cluster.StateRunning, cluster.StateRound, 3)
	rdb.HSet(ctx, state, cluster.StateField, cluster.StateFinished)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("--watch after round 3 ended: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("--watch went on after round 3 ended:\n%s", out.String())
	}
}
