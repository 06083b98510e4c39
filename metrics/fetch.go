package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Status classes: the status label of fetches.
const (
	class1xx = iota
	class2xx
	class3xx
	class4xx
	class5xx
	classTimeout
	classError
	nClasses
)

var classNames = [nClasses]string{"1xx", "2xx", "3xx", "4xx", "5xx", "timeout", "error"}

// classOf is the status class of an answer: its HTTP status class, or,
// without one, timeout or error.
func classOf(status int, err error) int {
	switch {
	case status >= 100 && status <= 599:
		return status/100 - 1
	case err != nil && isTimeout(err):
		return classTimeout
	}
	return classError
}

// isTimeout reports a deadline passed: the context's, or a net.Error's.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// Fetch records the pages one node fetches. A nil *Fetch records nothing.
type Fetch struct {
	hosts    *bounded[*hostPages]
	duration [nClasses]lazy[prometheus.Observer]
	durVec   prometheus.ObserverVec
	inFlight prometheus.Gauge
}

// hostPages are one host label's series.
type hostPages struct {
	pages [nClasses]lazy[prometheus.Counter]
	vec   *prometheus.CounterVec // curried down to the status label
	bytes prometheus.Counter
}

func newFetch(r *Registry, labels prometheus.Labels) *Fetch {
	pages := r.f.fetchPages.MustCurryWith(labels)
	bytes := r.f.fetchBytes.MustCurryWith(labels)
	return &Fetch{
		hosts: newBounded(r.hosts, func(host string) *hostPages {
			return &hostPages{
				vec:   pages.MustCurryWith(prometheus.Labels{labelHost: host}),
				bytes: bytes.WithLabelValues(host),
			}
		}),
		durVec:   r.f.fetchDuration.MustCurryWith(labels),
		inFlight: r.f.fetchInFlight.With(labels),
	}
}

// Observe records one page fetched from host: the HTTP status of the answer
// (0 when there was none), the body bytes read, how long it took, and the
// error if it failed. Without a status the page counts as "timeout" when
// err is a deadline passed, else as "error". Hosts past Options.Hosts are
// counted as "other".
func (f *Fetch) Observe(host string, status int, bytes int64, latency time.Duration, err error) {
	if f == nil {
		return
	}
	c := classOf(status, err)
	h := f.hosts.get(hostLabel(host))
	h.pages[c].get(func() prometheus.Counter { return h.vec.WithLabelValues(classNames[c]) }).Inc()
	if bytes > 0 {
		h.bytes.Add(float64(bytes))
	}
	f.duration[c].get(func() prometheus.Observer { return f.durVec.WithLabelValues(classNames[c]) }).
		Observe(latency.Seconds())
}

// InFlight adds delta (+1 as a fetch starts, -1 as it ends) to the pages
// being fetched now.
func (f *Fetch) InFlight(delta int) {
	if f == nil {
		return
	}
	f.inFlight.Add(float64(delta))
}
