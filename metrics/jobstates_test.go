package metrics

import "testing"

// TestJobStates: each job has a series per state, 1 for the one it is in;
// a change of state moves the 1, and a job forgotten has no series left.
func TestJobStates(t *testing.T) {
	r := newRegistry(t, Options{Jobs: 1})
	s := r.JobStates()
	s.Set("news", "running")
	s.Set("blog", "paused") // past Options.Jobs: under "other"
	s.Set("news", "paused")
	m := gather(t, r)
	m.expect(t, 1, "crawler_job_state", "job=news", "state=paused")
	m.expect(t, 0, "crawler_job_state", "job=news", "state=running")
	m.expect(t, 1, "crawler_job_state", "job=other", "state=paused")
	if n := m.count("crawler_job_state"); n != 2*len(JobStateNames) {
		t.Errorf("%d series, want %d:\n%s", n, 2*len(JobStateNames), m.dump("crawler_job_state"))
	}
	s.Forget("news")
	s.Forget("blog")
	if n := gather(t, r).count("crawler_job_state"); n != 0 {
		t.Errorf("%d series left after Forget", n)
	}
}
