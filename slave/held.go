package slave

import (
	"sync"
)

// heldTasks is what the slave has taken and not yet acknowledged, per job:
// their leases are renewed while held and handed back on shutdown.
type heldTasks struct {
	mu    sync.Mutex
	byJob map[*job]map[string]bool
}

func newHeldTasks() *heldTasks { return &heldTasks{byJob: map[*job]map[string]bool{}} }

func (h *heldTasks) add(j *job, raw string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.byJob[j]
	if m == nil {
		m = map[string]bool{}
		h.byJob[j] = m
	}
	m[raw] = true
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
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[*job][]string, len(h.byJob))
	for j, m := range h.byJob {
		for raw := range m {
			out[j] = append(out[j], raw)
		}
	}
	return out
}
