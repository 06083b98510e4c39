package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
)

// busyStatus is a job in the middle of a crawl, with big counters.
func busyStatus() *client.Status {
	return &client.Status{Job: "news", State: "running", Round: 1, Counters: client.Counters{
		ListPages: 1234, Discovered: 1234567, Stored: 456789, Failed: 1234, Skipped: 56, Duplicates: 78901,
		Queued: 654321, InFlight: 128}}
}

// TestRateMeter_keepsTheLastRate: samples closer than a second to the
// last measure keep its rate, so every redraw shows pages/s and an ETA,
// not one in four (the status is polled every 250 ms).
func TestRateMeter_keepsTheLastRate(t *testing.T) {
	t.Parallel()
	m := newRateMeter()
	t0 := time.Now()
	if r := m.sample(t0, 0); r != -1 {
		t.Errorf("first sample: rate %v, want -1 (nothing measured yet)", r)
	}
	st := busyStatus()
	for i := 1; i <= 12; i++ {
		at := t0.Add(time.Duration(i) * 250 * time.Millisecond)
		r := m.sample(at, int64(100*i)) // 400 pages/s
		if i < 4 {
			continue
		}
		if r != 400 {
			t.Errorf("sample %d (%s): rate %v, want 400", i, at.Sub(t0), r)
		}
		line := progressText(st, r, at.Sub(t0))
		if !strings.Contains(line, "400 pages/s") || !strings.Contains(line, "eta ") {
			t.Errorf("sample %d: line lacks the rate or the ETA: %s", i, line)
		}
	}
}

// TestFitLine: on an 80-column terminal the line is cut to fit, dropping
// the least important parts first and keeping the state, the share done,
// the stored count and the rate.
func TestFitLine(t *testing.T) {
	t.Parallel()
	parts := progressParts(busyStatus(), 1234, 75*time.Minute)
	full := joinParts(parts)
	if len(full) <= 80 {
		t.Fatalf("the test needs a line longer than 80 columns: %d: %s", len(full), full)
	}
	for _, width := range []int{79, 60, 40} {
		line := fitLine(parts, width)
		if len(line) > width {
			t.Errorf("width %d: %d characters: %s", width, len(line), line)
		}
		for _, keep := range []string{"running", "%", "stored 456789"} {
			if !strings.Contains(line, keep) {
				t.Errorf("width %d: lost %q: %s", width, keep, line)
			}
		}
		if strings.Contains(line, "list 1234") {
			t.Errorf("width %d: kept the list pages, the least important part: %s", width, line)
		}
	}
	if line := fitLine(parts, 79); !strings.Contains(line, "1234 pages/s") {
		t.Errorf("80 columns: the rate was dropped: %s", line)
	}
	if line := fitLine(parts, 500); line != full {
		t.Errorf("a wide terminal: %q, want the whole line %q", line, full)
	}
	if line := fitLine(parts, 5); len(line) != 5 {
		t.Errorf("a 5-column terminal: %q", line)
	}
}

// TestConsole_terminalLineFits: on a terminal every redraw is cut to the
// terminal's width (minus the last column), so \r\033[K clears all of it.
func TestConsole_terminalLineFits(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := &console{out: &out, terminal: true, width: func() int { return 80 }, every: 5 * time.Second,
		started: time.Now(), meter: newRateMeter()}
	for range 3 {
		c.show(busyStatus())
	}
	for _, draw := range strings.Split(out.String(), "\r\033[K")[1:] {
		if len(draw) > 79 {
			t.Errorf("a %d-column redraw on an 80-column terminal: %q", len(draw), draw)
		}
	}
}

// TestConsole_JSONLogs: with --log-format json the progress is a JSON log
// record, never a plain line, so every line of the stream parses.
func TestConsole_JSONLogs(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := &console{out: &out, every: 0, started: time.Now(), meter: newRateMeter()}
	logger, err := newLoggerTo("info", "json", c)
	if err != nil {
		t.Fatal(err)
	}
	c.logJSON(logger.Named("progress"))
	logger.Info("slave started")
	c.show(busyStatus())
	c.show(busyStatus())
	c.done()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	progress := 0
	for _, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("not JSON: %q", line)
			continue
		}
		if rec["msg"] == "progress" {
			progress++
			if rec["stored"] != float64(456789) || rec["state"] != "running" {
				t.Errorf("progress record lacks the counters: %s", line)
			}
		}
	}
	if progress != 2 {
		t.Errorf("%d progress records, want 2:\n%s", progress, out.String())
	}
}
