package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/crawler-dev/crawler/cluster"
)

// maxSinks bounds the sink label: a process has the few sinks its
// command line names.
const maxSinks = 16

// Sinks counts what each item sink of the process did with the records
// sent to it. A nil *Sinks records nothing.
type Sinks struct {
	names   *labelSet
	records *prometheus.CounterVec
}

func newSinks(r *Registry) *Sinks {
	return &Sinks{names: newLabelSet(maxSinks), records: r.f.sinkRecords}
}

// Sink results.
const (
	SinkAccepted = cluster.SinkAccepted // the sink took the record
	SinkRetried  = cluster.SinkRetried  // a try failed and the record is sent again
	SinkRefused  = cluster.SinkRefused  // the sink will never take the record
)

// Count adds n records of sink (its URI, credentials hidden) with result
// SinkAccepted, SinkRetried or SinkRefused.
func (s *Sinks) Count(sink, result string, n int) {
	if s == nil || n == 0 {
		return
	}
	s.records.WithLabelValues(s.names.label(sink), result).Add(float64(n))
}

// Sinks returns the item sinks' counters; nil (a no-op) on a nil
// Registry.
func (r *Registry) Sinks() *Sinks {
	if r == nil {
		return nil
	}
	return r.sinks
}
