package slave

import (
	"sync"
	"time"
)

// heldTasks is what the slave has taken and not yet acknowledged, per job,
// with when each one's lease ends by the slave's own clock: leases are
// renewed only as their end comes near, and what is held is handed back on
// shutdown.
type heldTasks struct {
	mu    sync.Mutex
	byJob map[*job]map[string]time.Time
}

func newHeldTasks() *heldTasks { return &heldTasks{byJob: map[*job]map[string]time.Time{}} }

// add holds raw, whose lease ends at leaseEnd: at the latest, the time the
// take was sent plus the lease (Redis set it from its clock on arrival).
func (h *heldTasks) add(j *job, raw string, leaseEnd time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.byJob[j]
	if m == nil {
		m = map[string]time.Time{}
		h.byJob[j] = m
	}
	m[raw] = leaseEnd
}

func (h *heldTasks) remove(j *job, raw string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.byJob[j], raw)
	if len(h.byJob[j]) == 0 {
		delete(h.byJob, j)
	}
}

// snapshot returns the held tasks per job.
func (h *heldTasks) snapshot() map[*job][]string {
	return h.collect(func(time.Time) bool { return true })
}

// endingBy returns, per job, the held tasks whose lease ends before t.
func (h *heldTasks) endingBy(t time.Time) map[*job][]string {
	return h.collect(func(end time.Time) bool { return end.Before(t) })
}

func (h *heldTasks) collect(keep func(leaseEnd time.Time) bool) map[*job][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[*job][]string, len(h.byJob))
	for j, m := range h.byJob {
		for raw, end := range m {
			if keep(end) {
				out[j] = append(out[j], raw)
			}
		}
	}
	return out
}

// renewed records that the leases of raws (those still held) end at
// leaseEnd.
func (h *heldTasks) renewed(j *job, raws []string, leaseEnd time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.byJob[j]
	for _, raw := range raws {
		if _, ok := m[raw]; ok {
			m[raw] = leaseEnd
		}
	}
}
