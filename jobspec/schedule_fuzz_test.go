package jobspec

import (
	"runtime"
	"testing"
	"time"
)

// FuzzSchedule validates any schedule as a job file does and checks what
// an accepted one promises: it fires, after the time asked and within
// five years; @every is no shorter than MinRoundInterval; and parsing and
// finding the next time allocate within a bound of the expression's size
// (the cron library's search is bounded by its five years).
//
//	go test -run='^$' -fuzz=FuzzSchedule -fuzztime=30s ./jobspec/
func FuzzSchedule(f *testing.F) {
	for _, seed := range []string{"0 3 * * *", "0 0 30 2 *", "0 0 29 2 *", "@every 0s", "@every 90m", "CRON_TZ=Asia/Shanghai 0 3 * * 1-5",
		"*/7 1-5/2 L * *", "@yearly", "0 0 31 4,6 *", "TZ=UTC 59 23 31 12 0"} {
		f.Add(seed)
	}
	from := time.Date(2030, 2, 28, 23, 59, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr string) {
		if expr == "" || len(expr) > 256 {
			return
		}
		s := &Job{Schedule: expr}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := s.validateSchedule()
		next := s.NextRound(from)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20+64*uint64(len(expr)) {
			t.Fatalf("%q: allocated %d bytes", expr, alloc)
		}
		if err != nil {
			return
		}
		if !next.After(from) || next.After(from.AddDate(5, 0, 1)) {
			t.Fatalf("%q accepted, next round after %s at %s", expr, from, next)
		}
		if next.Sub(from) < MinRoundInterval {
			t.Fatalf("%q accepted, next round %s after the last", expr, next.Sub(from))
		}
	})
}
