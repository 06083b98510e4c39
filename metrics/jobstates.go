package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// JobStateNames are the states crawler_job_state reports for every job,
// each 1 while the job is in it and 0 otherwise (cluster's job states),
// so a change of state changes values, never which series exist.
var JobStateNames = []string{"pending", "running", "paused", "finished"}

// JobStates are the states of the jobs a master runs, which it sets as it
// reads them; read out at each scrape as crawler_job_state{job,state}.
// Jobs past Options.Jobs are added up under job="other" (the value is then
// how many of them are in the state). A nil *JobStates records nothing.
type JobStates struct {
	jobs *labelSet
	desc *prometheus.Desc

	mu    sync.Mutex
	byJob map[string]jobState
}

// jobState is the last state set for one job, with its label.
type jobState struct {
	label, state string
}

func newJobStates(jobs *labelSet) *JobStates {
	return &JobStates{
		jobs: jobs,
		desc: prometheus.NewDesc("crawler_job_state",
			"A job's state, as the master that runs it last read it: 1 for the state it is in (pending, running, paused, finished), else 0.",
			[]string{labelJob, labelState}, nil),
		byJob: make(map[string]jobState),
	}
}

// Set records that job is in state (one of JobStateNames).
func (s *JobStates) Set(job, state string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	js, ok := s.byJob[job]
	if !ok {
		js.label = s.jobs.label(job)
	}
	js.state = state
	s.byJob[job] = js
}

// Forget drops job's state, when its runner stops: its series go away.
func (s *JobStates) Forget(job string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byJob, job)
}

// Describe implements prometheus.Collector.
func (s *JobStates) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }

// Collect implements prometheus.Collector: a gauge per job and state.
func (s *JobStates) Collect(ch chan<- prometheus.Metric) {
	type series struct{ job, state string }
	sum := make(map[series]int)
	s.mu.Lock()
	for _, js := range s.byJob {
		for _, st := range JobStateNames {
			sum[series{js.label, st}] += 0 // every state has its series, 0 unless in it
		}
		sum[series{js.label, js.state}]++
	}
	s.mu.Unlock()
	for k, v := range sum {
		ch <- prometheus.MustNewConstMetric(s.desc, prometheus.GaugeValue, float64(v), k.job, k.state)
	}
}
