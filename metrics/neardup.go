package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// NearDup is what one slave's copies of its jobs' near-duplicate indexes
// hold: entries and estimated memory, per job, set after each batch the
// slave commits. A nil *NearDup records nothing.
type NearDup struct {
	jobs            *labelSet
	entries, memory *prometheus.GaugeVec
	mu              sync.Mutex
	held            map[string]nearHeld // by job
}

// nearHeld is what one job's copy holds.
type nearHeld struct {
	label   string
	entries int
	bytes   int64
}

func newNearDup(r *Registry, labels prometheus.Labels) *NearDup {
	return &NearDup{jobs: r.jobs, entries: r.f.nearEntries.MustCurryWith(labels),
		memory: r.f.nearBytes.MustCurryWith(labels), held: map[string]nearHeld{}}
}

// Set records that job's copy holds entries entries in about bytes of
// memory. Jobs past Options.Jobs are added up under job="other".
func (n *NearDup) Set(job string, entries int, bytes int64) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	h := nearHeld{label: n.jobs.label(job), entries: entries, bytes: bytes}
	n.held[job] = h
	n.publish(h.label)
}

// Forget drops job's copy, when the slave stops working on the job.
func (n *NearDup) Forget(job string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	h, ok := n.held[job]
	if !ok {
		return
	}
	delete(n.held, job)
	n.publish(h.label)
}

// publish sets the gauges of label to the sum of its jobs, or removes
// them when it has none. n.mu is held.
func (n *NearDup) publish(label string) {
	var entries int
	var bytes int64
	found := false
	for _, h := range n.held {
		if h.label == label {
			entries, bytes, found = entries+h.entries, bytes+h.bytes, true
		}
	}
	if !found {
		n.entries.DeleteLabelValues(label)
		n.memory.DeleteLabelValues(label)
		return
	}
	n.entries.WithLabelValues(label).Set(float64(entries))
	n.memory.WithLabelValues(label).Set(float64(bytes))
}
