package demosite

import (
	"net"
	"net/http"
	"time"
)

// fault is what a faulty detail page (Options.FaultEvery) does.
type fault int

// Faults, taken in turn by the faulty pages.
const (
	faultNone      fault = iota
	faultGone            // 404, for good: recorded as failed
	faultBusyOnce        // 503 once, then the page
	faultBusyTwice       // 503 twice, then the page
	faultReset           // the connection reset once, then the page
	faultStall           // the page after Options.Stall
	faultKinds     = faultStall
)

// fault is detail id's fault, faultNone for most pages.
func (s *Site) fault(id int) fault {
	n := s.opts.FaultEvery
	if n <= 0 || id%n != 0 {
		return faultNone
	}
	return faultGone + fault((id/n-1)%int(faultKinds))
}

// FaultCounts are the detail pages of each fault of a site.
type FaultCounts struct {
	Gone, BusyOnce, BusyTwice, Resets, Stalls int
}

// Retries is the requests beyond one per page that a crawl must make to
// store every page that can be stored: one per 503 and per reset.
func (f FaultCounts) Retries() int { return f.BusyOnce + 2*f.BusyTwice + f.Resets }

// Faults counts the detail pages of each fault; the stalls and the
// retries are what bounds how fast any crawler can crawl the site.
func (s *Site) Faults() FaultCounts {
	var f FaultCounts
	for id := s.opts.FirstID; id <= s.lastID(); id++ {
		switch s.fault(id) {
		case faultGone:
			f.Gone++
		case faultBusyOnce:
			f.BusyOnce++
		case faultBusyTwice:
			f.BusyTwice++
		case faultReset:
			f.Resets++
		case faultStall:
			f.Stalls++
		}
	}
	return f
}

// injectFault answers detail id's fault, if it has one to answer this
// time, and reports whether it did; the 404 is served as a gone page.
func (s *Site) injectFault(w http.ResponseWriter, r *http.Request, id int) bool {
	switch s.fault(id) {
	case faultBusyOnce, faultBusyTwice:
		if s.failFirst(id, int(s.fault(id)-faultBusyOnce)+1) {
			http.Error(w, "busy, try again", http.StatusServiceUnavailable)
			return true
		}
	case faultReset:
		if s.failFirst(id, 1) {
			resetConnection(w)
			return true
		}
	case faultStall:
		select {
		case <-time.After(s.opts.Stall):
		case <-r.Context().Done():
			return true
		}
	}
	return false
}

// resetConnection closes the request's connection with a TCP reset (no
// response at all), as a crashing server or a middlebox does.
func resetConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}
