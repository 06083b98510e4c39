package metrics

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Queues are the depths of the slaves' task queues, per job: tasks waiting
// and tasks in flight (leased to a slave), which the master reads
// periodically (queue.Depth) and sets here. They are read out at each
// scrape. A nil *Queues records nothing.
type Queues struct {
	jobs *labelSet
	desc *prometheus.Desc

	mu    sync.Mutex
	byJob map[string]*jobDepth
}

// jobDepth is the last depth set for one job. A slave's series are shown
// from the first time it had a task on, so slaves never used do not add
// series and a drained queue reads 0 rather than vanishing.
type jobDepth struct {
	label    string
	queued   []int64
	inflight []int64
	used     []bool
}

func newQueues(jobs *labelSet) *Queues {
	return &Queues{
		jobs: jobs,
		desc: prometheus.NewDesc("crawler_queue_tasks",
			"Tasks in a slave's queue for a job, waiting (state=queued) or leased to the slave (state=inflight).",
			[]string{labelJob, labelSlave, labelState}, nil),
		byJob: make(map[string]*jobDepth),
	}
}

// Set records job's queue depths: queued[i] and inflight[i] are slave i's.
// Jobs past Options.Jobs are added up under job="other".
func (q *Queues) Set(job string, queued, inflight []int64) {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	d, ok := q.byJob[job]
	if !ok {
		d = &jobDepth{label: q.jobs.label(job)}
		q.byJob[job] = d
	}
	n := max(len(queued), len(inflight), len(d.used))
	d.queued, d.inflight = grow(d.queued[:0], n), grow(d.inflight[:0], n)
	copy(d.queued, queued)
	copy(d.inflight, inflight)
	for len(d.used) < n {
		d.used = append(d.used, false)
	}
	for i := range n {
		d.used[i] = d.used[i] || d.queued[i] != 0 || d.inflight[i] != 0
	}
}

// grow returns s extended with zeros to length n.
func grow(s []int64, n int) []int64 {
	for len(s) < n {
		s = append(s, 0)
	}
	return s
}

// Forget drops job's depths, when its runner stops: its series go away.
func (q *Queues) Forget(job string) {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.byJob, job)
}

type queueSeries struct {
	job   string
	slave int
	state string
}

// Describe implements prometheus.Collector.
func (q *Queues) Describe(ch chan<- *prometheus.Desc) { ch <- q.desc }

// Collect implements prometheus.Collector: one gauge per job, used slave
// and state, jobs folded into "other" added up.
func (q *Queues) Collect(ch chan<- prometheus.Metric) {
	sum := make(map[queueSeries]int64)
	q.mu.Lock()
	for _, d := range q.byJob {
		for i, used := range d.used {
			if used {
				sum[queueSeries{d.label, i, "queued"}] += d.queued[i]
				sum[queueSeries{d.label, i, "inflight"}] += d.inflight[i]
			}
		}
	}
	q.mu.Unlock()
	for s, v := range sum {
		ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, float64(v), s.job, strconv.Itoa(s.slave), s.state)
	}
}
