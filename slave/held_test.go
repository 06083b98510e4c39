package slave

import (
	"slices"
	"testing"
	"time"
)

// TestHeldTasks_endingBy: a renewal takes only the held tasks whose lease
// ends before its horizon, and a renewal recorded moves their end; a task
// let go meanwhile is not held again by it.
func TestHeldTasks_endingBy(t *testing.T) {
	h := newHeldTasks()
	j := &job{name: "held"}
	now := time.Now()
	h.add(j, "soon", now.Add(5*time.Second))
	h.add(j, "later", now.Add(50*time.Second))
	h.add(j, "gone", now.Add(time.Second))
	h.remove(j, "gone")
	got := h.endingBy(now.Add(15 * time.Second))[j]
	if !slices.Equal(got, []string{"soon"}) {
		t.Fatalf("endingBy(now+15s) = %v, want [soon]", got)
	}
	h.renewed(j, []string{"soon", "gone"}, now.Add(65*time.Second))
	if got := h.endingBy(now.Add(15 * time.Second)); len(got) != 0 {
		t.Errorf("after the renewal endingBy(now+15s) = %v, want none", got)
	}
	all := h.snapshot()[j]
	slices.Sort(all)
	if !slices.Equal(all, []string{"later", "soon"}) {
		t.Errorf("held = %v, want [later soon] (a task let go is not held again by a renewal)", all)
	}
}
