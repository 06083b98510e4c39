package cluster

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
func (s *JobSpec) SendsValidators() bool { return s.Conditional == nil || *s.Conditional }

// Recurring reports whether the job runs more than one round
// (recrawl_every or schedule).
func (s *JobSpec) Recurring() bool { return s.RecrawlEvery > 0 || s.Schedule != "" }

// ParseSchedule parses a schedule: a five-field cron expression (minute
// hour day-of-month month day-of-week) or a descriptor such as @daily, in
// UTC unless it starts with CRON_TZ=Zone (or TZ=Zone).
func ParseSchedule(expr string) (cron.Schedule, error) {
	expr = strings.TrimSpace(expr)
	if !strings.HasPrefix(expr, "CRON_TZ=") && !strings.HasPrefix(expr, "TZ=") {
		expr = "CRON_TZ=UTC " + expr // the library's default is the machine's zone
	}
	return cron.ParseStandard(expr)
}

func (s *JobSpec) validateSchedule() error {
	if s.Schedule == "" {
		return nil
	}
	if s.RecrawlEvery > 0 {
		return errors.New("schedule and recrawl_every: set one or the other, not both " +
			"(schedule starts rounds at fixed times, recrawl_every a while after the last round finished)")
	}
	if _, err := ParseSchedule(s.Schedule); err != nil {
		return fmt.Errorf("schedule: %q is not a cron expression (e.g. \"0 3 * * *\", 03:00 UTC daily): %v", s.Schedule, err)
	}
	return nil
}

// NextRound is when the round after one that finished at finished starts:
// recrawl_every after it, or the schedule's first time after it. Zero when
// the job runs once (or its schedule never fires again). Rounds a schedule
// missed while no master was running are not made up one by one: the
// next round is the first time after the last round finished, so a master
// that comes back late starts one round at once, not one per missed time.
func (s *JobSpec) NextRound(finished time.Time) time.Time {
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
