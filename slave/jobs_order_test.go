package slave

import (
	"reflect"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/jobspec"
)

// TestOrderJobs: jobs of a higher priority go first; one passed over
// gains one priority per aging step it waits and gets its turn; ties, and
// jobs all at priority 0, keep the round-robin order.
func TestOrderJobs(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	mk := func(name string, prio int, waited time.Duration) *job {
		j := &job{name: name, spec: &jobspec.Job{Name: name, Priority: prio}}
		j.servedAt.Store(now.Add(-waited).UnixNano())
		return j
	}
	names := func(jobs []*job) []string {
		out := make([]string, len(jobs))
		for i, j := range jobs {
			out[i] = j.name
		}
		return out
	}
	for _, tc := range []struct {
		name string
		jobs []*job
		want []string
	}{
		{"no priorities: round-robin as given", []*job{mk("a", 0, 0), mk("b", 0, time.Hour), mk("c", 0, time.Second)},
			[]string{"a", "b", "c"}},
		{"higher first", []*job{mk("low", 0, 0), mk("high", 5, 0), mk("mid", 2, 0)}, []string{"high", "mid", "low"}},
		{"passed over 4 steps: not yet", []*job{mk("high", 5, 0), mk("low", 0, 4*time.Second)}, []string{"high", "low"}},
		{"passed over 6 steps: its turn", []*job{mk("high", 5, 0), mk("low", 0, 6*time.Second)}, []string{"low", "high"}},
		{"ties keep the rotation", []*job{mk("b", 1, 0), mk("a", 1, 0), mk("c", 0, time.Second)}, []string{"b", "a", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(orderJobs(tc.jobs, now, time.Second)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("orderJobs = %v, want %v", got, tc.want)
			}
		})
	}
}
