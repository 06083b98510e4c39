package jobspec

import (
	"strings"
	"testing"
	"time"
)

func TestRecrawl_CheckSchedule(t *testing.T) {
	r := &Recrawl{Mode: RecrawlAdaptive, Min: Duration(time.Hour), Max: Duration(30 * 24 * time.Hour)}
	for _, tc := range []struct {
		name    string
		prev    time.Duration
		changed bool
		want    time.Duration
	}{
		{"new page", 0, false, time.Hour},
		{"unchanged doubles", 3 * time.Hour, false, 6 * time.Hour},
		{"changed halves", 6 * time.Hour, true, 3 * time.Hour},
		{"never below min", time.Hour, true, time.Hour},
		{"never above max", 20 * 24 * time.Hour, false, 30 * 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.CheckSchedule(tc.prev, tc.changed); got != tc.want {
				t.Errorf("CheckSchedule(%s, %v) = %s, want %s", tc.prev, tc.changed, got, tc.want)
			}
		})
	}
}

func TestRecrawl_Due(t *testing.T) {
	r := &Recrawl{Mode: RecrawlAdaptive, Min: Duration(time.Hour), Max: Duration(24 * time.Hour)}
	now := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		next time.Time
		want bool
	}{
		{time.Time{}, true},                // no schedule yet
		{now.Add(-time.Minute), true},      // past
		{now.Add(29 * time.Minute), true},  // within half of min
		{now.Add(31 * time.Minute), false}, // later
	} {
		if got := r.Due(tc.next, now); got != tc.want {
			t.Errorf("Due(%s) = %v, want %v", tc.next, got, tc.want)
		}
	}
}

// A re-crawl's bounds read whole days.
func TestParse_recrawlDays(t *testing.T) {
	spec, err := Parse(strings.NewReader(minimalJob + "recrawl_every: 1h\nrecrawl: {mode: adaptive, min: 1h, max: 30d}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if spec.Recrawl.Max.Std() != 30*24*time.Hour {
		t.Errorf("recrawl.max = %s, want 720h", spec.Recrawl.Max)
	}
}
