package jobspec

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func parseJob(t *testing.T, extra string) (*Job, error) {
	t.Helper()
	return Parse(strings.NewReader(`name: nightly
seeds: ["https://example.com/"]
detail_link: {css: "a"}
fields: {title: {css: "h1"}}
` + extra))
}

func TestSchedule_validation(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"schedule: \"0 3 * * *\"\nrecrawl_every: 1h\n", "schedule and recrawl_every"},
		{"schedule: \"0 25 * * *\"\n", "schedule: \"0 25 * * *\" is not a cron expression"},
		{"schedule: \"every night\"\n", "schedule: \"every night\" is not a cron expression"},
		{"schedule: \"CRON_TZ=Mars/Base 0 3 * * *\"\n", "is not a cron expression"},
	} {
		_, err := parseJob(t, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.yaml, err, tc.want)
		}
	}
	for _, ok := range []string{"schedule: \"0 3 * * *\"\n", "schedule: \"CRON_TZ=Asia/Shanghai 0 3 * * 1-5\"\n",
		"schedule: \"@daily\"\n", "conditional: false\n"} {
		if _, err := parseJob(t, ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func TestNextRound(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		spec     Job
		finished string
		want     string
	}{
		{Job{Schedule: "0 3 * * *"}, "2026-01-01T05:00:00Z", "2026-01-02T03:00:00Z"}, // UTC by default
		{Job{Schedule: "0 3 * * *"}, "2026-01-01T02:59:00Z", "2026-01-01T03:00:00Z"},
		{Job{Schedule: "CRON_TZ=Asia/Shanghai 0 3 * * *"}, "2026-01-01T05:00:00Z", "2026-01-01T19:00:00Z"},
		{Job{RecrawlEvery: Duration(time.Hour)}, "2026-01-01T05:00:00Z", "2026-01-01T06:00:00Z"},
		{Job{}, "2026-01-01T05:00:00Z", ""},
	} {
		got := tc.spec.NextRound(at(tc.finished))
		if (tc.want == "" && !got.IsZero()) || (tc.want != "" && !got.Equal(at(tc.want))) {
			t.Errorf("%+v after %s: next round %s, want %q", tc.spec, tc.finished, got, tc.want)
		}
	}
}

// A master that was away for three nights starts one round when it comes
// back, not three: the next round is the first time after the last round
// finished, whenever that was; once it has run, the next is tomorrow.
func TestNextRound_missedRunsOnce(t *testing.T) {
	spec := Job{Schedule: "0 3 * * *"}
	lastFinished := time.Date(2026, 1, 1, 3, 20, 0, 0, time.UTC)
	back := time.Date(2026, 1, 4, 12, 0, 0, 0, time.UTC)
	due := spec.NextRound(lastFinished)
	if !due.Before(back) {
		t.Fatalf("next round %s is not due when the master is back at %s", due, back)
	}
	caughtUp := back.Add(10 * time.Minute) // the one catch-up round finished
	if next := spec.NextRound(caughtUp); !next.Equal(time.Date(2026, 1, 5, 3, 0, 0, 0, time.UTC)) {
		t.Errorf("after the catch-up round the next is %s, want tomorrow 03:00", next)
	}
}

// TestSchedule_neverOrTooOften (issue 29, item 8): a schedule that never
// fires ("0 0 30 2 *" was accepted and never ran a round) is refused,
// naming the fields that never meet, and so is @every below
// MinRoundInterval ("@every 0s" ran a round every second).
func TestSchedule_neverOrTooOften(t *testing.T) {
	for _, tc := range []struct{ schedule, want string }{
		{"0 0 30 2 *", `schedule: "0 0 30 2 *" never fires: its day-of-month (30) never falls in its month (2)`},
		{"CRON_TZ=Asia/Shanghai 0 0 31 4,6,9,11 *", "day-of-month (31) never falls in its month (4,6,9,11)"},
		{"@every 0s", `schedule: "@every 0s": @every 0s is shorter than 1s`},
		{"TZ=UTC @every 500ms", "@every 500ms is shorter than 1s"},
		{"TZ=", `schedule: "TZ=" is not a cron expression`}, // the cron library panicked (FuzzSchedule)
	} {
		_, err := parseJob(t, fmt.Sprintf("schedule: %q\n", tc.schedule))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("schedule %q: error %v, want one saying %q", tc.schedule, err, tc.want)
		}
	}
	for _, ok := range []string{"0 0 29 2 *", "0 0 31 2 1", "@every 1s", "@every 6h", "@yearly"} {
		if _, err := parseJob(t, fmt.Sprintf("schedule: %q\n", ok)); err != nil {
			t.Errorf("schedule %q: %v", ok, err)
		}
	}
}
