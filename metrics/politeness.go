package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Politeness records the waits a node's politeness budget imposes. A nil
// *Politeness records nothing.
type Politeness struct {
	hosts  *bounded[*bounded[prometheus.Counter]] // host → reason → waits
	waited *bounded[prometheus.Observer]          // reason → wait
}

func newPoliteness(r *Registry, labels prometheus.Labels) *Politeness {
	waits := r.f.politenessWaits.MustCurryWith(labels)
	waited := r.f.politenessWaited.MustCurryWith(labels)
	return &Politeness{
		hosts: newBounded(r.hosts, func(host string) *bounded[prometheus.Counter] {
			return newBounded(r.reasons, func(reason string) prometheus.Counter {
				return waits.WithLabelValues(host, reason)
			})
		}),
		waited: newBounded(r.reasons, func(reason string) prometheus.Observer {
			return waited.WithLabelValues(reason)
		}),
	}
}

// Waited records one request to host held back for wait, and why: the
// politeness budget's reason ("rate", "full", "paused"), or one of the
// caller's own such as "crawl_delay", "robots" (waiting for another
// process to fetch robots.txt) or "late" (its turn passed before it could
// be sent, on a busy machine: it waits for another). Past 16 distinct reasons the rest are
// counted as "other".
func (p *Politeness) Waited(host string, wait time.Duration, reason string) {
	if p == nil {
		return
	}
	p.hosts.get(hostLabel(host)).get(reason).Inc()
	p.waited.get(reason).Observe(wait.Seconds())
}

// Robots records what robots.txt does to a node's fetches. A nil *Robots
// records nothing.
type Robots struct {
	disallowed *bounded[prometheus.Counter]
	fetches    [nClasses]lazy[prometheus.Counter]
	fetchVec   *prometheus.CounterVec
}

func newRobots(r *Registry, labels prometheus.Labels) *Robots {
	disallowed := r.f.robotsDisallowed.MustCurryWith(labels)
	return &Robots{
		disallowed: newBounded(r.hosts, func(host string) prometheus.Counter {
			return disallowed.WithLabelValues(host)
		}),
		fetchVec: r.f.robotsFetches.MustCurryWith(labels),
	}
}

// Disallowed counts one URL on host not fetched because robots.txt
// disallows it.
func (r *Robots) Disallowed(host string) {
	if r == nil {
		return
	}
	r.disallowed.get(hostLabel(host)).Inc()
}

// Fetched counts one robots.txt download by this node: its HTTP status, or
// 0 and the error when there was no answer.
func (r *Robots) Fetched(status int, err error) {
	if r == nil {
		return
	}
	c := classOf(status, err)
	r.fetches[c].get(func() prometheus.Counter { return r.fetchVec.WithLabelValues(classNames[c]) }).Inc()
}
