package jobspec

import (
	"errors"
	"fmt"
	"time"
)

// RecrawlAdaptive is the one re-crawl mode a job may name: each page's
// next check learned from its own history.
const RecrawlAdaptive = "adaptive"

// Bounds of an adaptive re-crawl's intervals.
const (
	MinRecrawlInterval = Duration(time.Second)
	MaxRecrawlInterval = Duration(10 * 365 * 24 * time.Hour)
)

// Recrawl says which known pages a round of a recurring job checks.
// Without it every round checks every page it finds. With mode adaptive,
// each page has an interval of its own, kept with its item: a visit that
// finds it changed halves it, one that finds it unchanged (or a 304)
// doubles it, always within [Min, Max]; a new page starts at Min. A round
// fetches the pages whose next check is due and counts the others as
// skipped_not_due.
type Recrawl struct {
	// Mode is "adaptive".
	Mode string `yaml:"mode" json:"mode"`
	// Min and Max bound a page's interval between two checks.
	Min Duration `yaml:"min" json:"min"`
	Max Duration `yaml:"max" json:"max"`
}

// CheckSchedule is a page's interval after a visit that found it changed
// or not (a new page starts at Min), from its interval before (0: none).
func (r *Recrawl) CheckSchedule(prev time.Duration, changed bool) time.Duration {
	lo, hi := r.Min.Std(), r.Max.Std()
	switch {
	case prev <= 0:
		return lo
	case changed:
		return min(max(prev/2, lo), hi)
	}
	return min(max(prev*2, lo), hi)
}

// Due reports whether a page whose next check is at next is due at now:
// once less than half of Min is left, so that a page checked a little
// later in its last round than in this one is not put off by a round.
func (r *Recrawl) Due(next, now time.Time) bool {
	return next.IsZero() || next.Sub(now) < r.Min.Std()/2
}

func (s *Job) validateRecrawl() error {
	r := s.Recrawl
	if r == nil {
		return nil
	}
	switch {
	case r.Mode != RecrawlAdaptive:
		return fmt.Errorf("recrawl.mode: %q is not a re-crawl mode (want %s)", r.Mode, RecrawlAdaptive)
	case r.Min < MinRecrawlInterval || r.Min > MaxRecrawlInterval:
		return fmt.Errorf("recrawl.min: %s is outside %s..%s", r.Min, MinRecrawlInterval, MaxRecrawlInterval)
	case r.Max < r.Min || r.Max > MaxRecrawlInterval:
		return fmt.Errorf("recrawl.max: %s is outside min (%s)..%s", r.Max, r.Min, MaxRecrawlInterval)
	case !s.Recurring():
		return errors.New("recrawl: a job that runs once has nothing to re-crawl; give it recrawl_every or schedule")
	}
	return nil
}
