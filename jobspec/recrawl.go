package jobspec

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// SendsValidators reports whether a re-fetch sends the page's stored ETag
// and Last-Modified (conditional: true, the default). Without them every
// page is sent in full and its content hash alone decides what changed.
func (s *Job) SendsValidators() bool { return s.Conditional == nil || *s.Conditional }

// Recurring reports whether the job runs more than one round
// (recrawl_every or schedule).
func (s *Job) Recurring() bool { return s.RecrawlEvery > 0 || s.Schedule != "" }

// ParseSchedule parses a schedule: a five-field cron expression (minute
// hour day-of-month month day-of-week) or a descriptor such as @daily, in
// UTC unless it starts with CRON_TZ=Zone (or TZ=Zone).
func ParseSchedule(expr string) (cron.Schedule, error) {
	expr = strings.TrimSpace(expr)
	if !strings.HasPrefix(expr, "CRON_TZ=") && !strings.HasPrefix(expr, "TZ=") {
		expr = "CRON_TZ=UTC " + expr // the library's default is the machine's zone
	} else if !strings.Contains(expr, " ") {
		return nil, errors.New("a time zone and no schedule after it") // the library panics on "TZ="
	}
	return cron.ParseStandard(expr)
}

func (s *Job) validateSchedule() error {
	if s.Schedule == "" {
		return nil
	}
	if s.RecrawlEvery > 0 {
		return errors.New("schedule and recrawl_every: set one or the other, not both " +
			"(schedule starts rounds at fixed times, recrawl_every a while after the last round finished)")
	}
	sched, err := ParseSchedule(s.Schedule)
	if err != nil {
		return fmt.Errorf("schedule: %q is not a cron expression (e.g. \"0 3 * * *\", 03:00 UTC daily): %v", s.Schedule, err)
	}
	if err := checkEvery(s.Schedule); err != nil {
		return err
	}
	if sched.Next(time.Now()).IsZero() {
		return fmt.Errorf("schedule: %q never fires: %s", s.Schedule, neverWhy(s.Schedule))
	}
	return nil
}

// MinRoundInterval is the shortest time between rounds that recrawl_every
// and a schedule's @every may ask for.
const MinRoundInterval = time.Second

// checkEvery refuses "@every D" with D below MinRoundInterval (the cron
// library makes "@every 0s" a round every second).
func checkEvery(expr string) error {
	fields := scheduleFields(expr)
	if len(fields) != 2 || fields[0] != "@every" {
		return nil
	}
	d, err := time.ParseDuration(fields[1])
	if err == nil && d < MinRoundInterval {
		return fmt.Errorf("schedule: %q: @every %s is shorter than %s", expr, fields[1], MinRoundInterval)
	}
	return nil
}

// scheduleFields are the fields of a schedule without its time zone.
func scheduleFields(expr string) []string {
	fields := strings.Fields(expr)
	if len(fields) > 0 && (strings.HasPrefix(fields[0], "CRON_TZ=") || strings.HasPrefix(fields[0], "TZ=")) {
		fields = fields[1:]
	}
	return fields
}

// neverWhy says which fields of a schedule that never fires never meet:
// only a day of the month that no month of the expression has can do it
// (the cron library looks five years ahead).
func neverWhy(expr string) string {
	if f := scheduleFields(expr); len(f) == 5 {
		return fmt.Sprintf("its day-of-month (%s) never falls in its month (%s) within five years", f[2], f[3])
	}
	return "no time within five years matches it"
}

// NextRound is when the round after one that finished at finished starts:
// recrawl_every after it, or the schedule's first time after it. Zero when
// the job runs once (or its schedule never fires again). Rounds a schedule
// missed while no master was running are not made up one by one: the
// next round is the first time after the last round finished, so a master
// that comes back late starts one round at once, not one per missed time.
func (s *Job) NextRound(finished time.Time) time.Time {
	switch {
	case s.RecrawlEvery > 0:
		return finished.Add(s.RecrawlEvery.Std())
	case s.Schedule != "":
		sched, err := ParseSchedule(s.Schedule)
		if err != nil {
			return time.Time{}
		}
		return sched.Next(finished).UTC()
	}
	return time.Time{}
}
