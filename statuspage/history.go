package statuspage

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// Sample is one point of the history the charts draw: the cluster's
// totals at one time.
type Sample struct {
	// T is the snapshot's time, Unix milliseconds.
	T int64 `json:"t"`
	// Done is the pages stored or failed over the jobs shown; Failed the
	// failed ones. The charts draw their rates between samples.
	Done   int64 `json:"done"`
	Failed int64 `json:"failed"`
	// Queued and Held are the tasks waiting in the slaves' queues and the
	// tasks the slaves hold (leased), summed.
	Queued int64 `json:"queued"`
	Held   int64 `json:"held"`
	// Slaves is each slave's tasks, queued plus held, by ID.
	Slaves map[string]int64 `json:"slaves"`
}

// History is what /api/history serves: the samples of the last
// HistoryKeep, oldest first, taken every EveryMS.
type History struct {
	EveryMS int64    `json:"every_ms"`
	Samples []Sample `json:"samples"`
}

// sampleOf reduces a snapshot to a sample.
func sampleOf(s *Snapshot) Sample {
	p := Sample{T: s.Time.UnixMilli(), Slaves: map[string]int64{}}
	for _, j := range s.Jobs {
		p.Done += j.Counters.Stored + j.Counters.Failed
		p.Failed += j.Counters.Failed
	}
	for _, sl := range s.Slaves {
		p.Queued += sl.Queued
		p.Held += sl.InFlight
		p.Slaves[strconv.Itoa(sl.ID)] = sl.Queued + sl.InFlight
	}
	return p
}

// history keeps the samples of the last keep, in a ring.
type history struct {
	mu      sync.Mutex
	every   time.Duration
	keep    time.Duration
	samples []Sample
}

// add appends s, dropping what is older than keep before it and
// anything not newer than the last sample (a cached snapshot).
func (h *history) add(s Sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.samples); n > 0 && s.T <= h.samples[n-1].T {
		return
	}
	h.samples = append(h.samples, s)
	cut := 0
	for cut < len(h.samples) && h.samples[cut].T < s.T-h.keep.Milliseconds() {
		cut++
	}
	if cut > 0 {
		h.samples = append(h.samples[:0], h.samples[cut:]...)
	}
}

// get returns a copy of the samples.
func (h *history) get() History {
	h.mu.Lock()
	defer h.mu.Unlock()
	return History{EveryMS: h.every.Milliseconds(), Samples: append([]Sample{}, h.samples...)}
}

// sampleLoop takes a sample every HistoryEvery until ctx ends, so a page
// loaded at any time shows the last HistoryKeep.
func (h *handler) sampleLoop(ctx context.Context) {
	t := time.NewTicker(h.opts.HistoryEvery)
	defer t.Stop()
	for {
		if snap, err := h.snapshot(ctx); err == nil {
			h.hist.add(sampleOf(snap))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
