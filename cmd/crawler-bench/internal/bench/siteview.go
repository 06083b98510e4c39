package bench

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// siteRequest is one request as a site saw it: when its handler started
// (before any latency the site adds), when the handler returned or gave
// the connection up to reset it, both since the site started, and its
// path.
type siteRequest struct {
	arrived, left time.Duration
	path          string
}

// rateWindow is the window of the site's rate check: a crawler on rate r
// and burst b never sends a host more than r + b requests within it.
const rateWindow = time.Second

// HostView is what one host saw of a crawl: the site's own count, which
// no crawler can talk its way around.
type HostView struct {
	// Host is the host's address, e.g. 127.0.0.2.
	Host string
	// Requests is every request it served: robots.txt, list and detail
	// pages, retries and every redirect hop.
	Requests int
	// LoopHops is the requests to its redirect loop.
	LoopHops int
	// PeakInFlight is the most requests in flight at once, each from its
	// arrival until its handler returned.
	PeakInFlight int
	// PeakSecond is the most requests that arrived within any one second
	// (a sliding window, not calendar seconds).
	PeakSecond int
	// BusiestAt is when that second began, since the first request any
	// host of the site saw; BusiestPaths are the paths that arrived in it,
	// each with its arrival in the second (e.g. "/detail/7 (+200 ms)"),
	// in order.
	BusiestAt    time.Duration
	BusiestPaths []string
}

// viewOf works a host's view out from its requests, in any order; its
// BusiestAt is since the site started.
func viewOf(host string, reqs []siteRequest) HostView {
	slices.SortFunc(reqs, func(a, b siteRequest) int { return cmp.Compare(a.arrived, b.arrived) })
	arrivals := make([]time.Duration, len(reqs))
	v := HostView{Host: host, Requests: len(reqs), PeakInFlight: maxInFlight(reqs)}
	for i, r := range reqs {
		arrivals[i] = r.arrived
		if strings.HasPrefix(r.path, "/loop/") {
			v.LoopHops++
		}
	}
	most, first := maxInWindow(arrivals, rateWindow)
	v.PeakSecond = most
	if most > 0 {
		v.BusiestAt = arrivals[first]
		for _, r := range reqs[first : first+most] {
			at := (r.arrived - v.BusiestAt).Milliseconds()
			v.BusiestPaths = append(v.BusiestPaths, fmt.Sprintf("%s (+%d ms)", r.path, at))
		}
	}
	return v
}

// maxInWindow is the most arrivals within any window [t, t+w), and the
// index of the first of them; arrivals are sorted. The busiest window can
// always be moved right until it starts at an arrival, so only those
// starts are tried, two pointers in one pass.
func maxInWindow(arrivals []time.Duration, w time.Duration) (most, first int) {
	end := 0
	for i, t := range arrivals {
		for end < len(arrivals) && arrivals[end] < t+w {
			end++
		}
		if end-i > most {
			most, first = end-i, i
		}
	}
	return most, first
}

// maxInFlight is the most requests in flight at once, each in flight over
// [arrived, left): one that leaves at the instant another arrives is not
// counted with it.
func maxInFlight(reqs []siteRequest) int {
	arrivals, lefts := make([]time.Duration, len(reqs)), make([]time.Duration, len(reqs))
	for i, r := range reqs {
		arrivals[i], lefts[i] = r.arrived, r.left
	}
	slices.Sort(arrivals)
	slices.Sort(lefts)
	most, gone := 0, 0
	for i, t := range arrivals {
		for gone < len(lefts) && lefts[gone] <= t {
			gone++
		}
		most = max(most, i+1-gone)
	}
	return most
}

// SiteView is what every host of the many-host site saw of a crawl.
type SiteView struct {
	Hosts []HostView
}

// Busiest is the host that served the most requests.
func (v SiteView) Busiest() HostView {
	return maxHost(v.Hosts, func(h HostView) int { return h.Requests })
}

// PeakInFlight is the host that had the most requests in flight at once.
func (v SiteView) PeakInFlight() HostView {
	return maxHost(v.Hosts, func(h HostView) int { return h.PeakInFlight })
}

// PeakSecond is the host that saw the most requests within one second.
func (v SiteView) PeakSecond() HostView {
	return maxHost(v.Hosts, func(h HostView) int { return h.PeakSecond })
}

// Requests is the requests every host served, together.
func (v SiteView) Requests() int { return v.sum(func(h HostView) int { return h.Requests }) }

// LoopHops is the requests to the redirect loops, every host's together.
func (v SiteView) LoopHops() int { return v.sum(func(h HostView) int { return h.LoopHops }) }

// OverInFlight is how many hosts had more than limit requests in flight
// at some instant.
func (v SiteView) OverInFlight(limit int) int {
	return v.count(func(h HostView) bool { return h.PeakInFlight > limit })
}

// OverSecond is how many hosts saw more than limit requests within some
// second.
func (v SiteView) OverSecond(limit int) int {
	return v.count(func(h HostView) bool { return h.PeakSecond > limit })
}

func (v SiteView) sum(f func(HostView) int) int {
	n := 0
	for _, h := range v.Hosts {
		n += f(h)
	}
	return n
}

func (v SiteView) count(f func(HostView) bool) int {
	n := 0
	for _, h := range v.Hosts {
		if f(h) {
			n++
		}
	}
	return n
}

// maxHost is the host with the highest f, the first of equals; the zero
// view when there is none.
func maxHost(hosts []HostView, f func(HostView) int) HostView {
	var best HostView
	for i, h := range hosts {
		if i == 0 || f(h) > f(best) {
			best = h
		}
	}
	return best
}
