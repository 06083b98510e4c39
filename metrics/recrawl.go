package metrics

import "github.com/prometheus/client_golang/prometheus"

// Recrawl counts what a slave's visits of detail pages found. A nil
// *Recrawl records nothing.
type Recrawl struct {
	jobs  *labelSet
	pages *prometheus.CounterVec
}

func newRecrawl(r *Registry, labels prometheus.Labels) *Recrawl {
	return &Recrawl{jobs: r.jobs, pages: r.f.recrawlPages.MustCurryWith(labels)}
}

// Visited counts one page of job stored with result new, changed,
// unchanged or not_modified. Jobs past Options.Jobs are counted as "other".
func (c *Recrawl) Visited(job, result string) {
	if c == nil {
		return
	}
	c.pages.WithLabelValues(c.jobs.label(job), result).Inc()
}

// Recrawl returns the node's re-crawl recorder.
func (n *Node) Recrawl() *Recrawl {
	if n == nil {
		return nil
	}
	return n.recrawl
}
