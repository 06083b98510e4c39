package metrics

import "github.com/prometheus/client_golang/prometheus"

// Dedup records what one node's dupefilter says of the URLs it checks. A
// nil *Dedup records nothing.
type Dedup struct {
	jobs *bounded[dedupJob]
}

type dedupJob struct{ fresh, dup prometheus.Counter }

func newDedup(r *Registry, labels prometheus.Labels) *Dedup {
	urls := r.f.dedupURLs.MustCurryWith(labels)
	return &Dedup{jobs: newBounded(r.jobs, func(job string) dedupJob {
		return dedupJob{fresh: urls.WithLabelValues(job, "new"), dup: urls.WithLabelValues(job, "duplicate")}
	})}
}

// Admitted records one dupefilter call for job: fresh URLs were new (and
// are now recorded), dup were already seen. Jobs past Options.Jobs are
// counted as "other".
func (d *Dedup) Admitted(job string, fresh, dup int) {
	if d == nil {
		return
	}
	j := d.jobs.get(job)
	if fresh > 0 {
		j.fresh.Add(float64(fresh))
	}
	if dup > 0 {
		j.dup.Add(float64(dup))
	}
}
