package metrics

import (
	"testing"
	"time"
)

// TestNode_Extracted: each extraction is observed under its result, on
// the node that made it; a nil Node records nothing.
func TestNode_Extracted(t *testing.T) {
	r := newRegistry(t, DefaultOptions())
	n := r.Node(RoleSlave, 3)
	n.Extracted(20*time.Millisecond, ExtractOK)
	n.Extracted(30*time.Millisecond, ExtractOK)
	n.Extracted(2*time.Second, ExtractLimit)
	(*Node)(nil).Extracted(time.Second, ExtractError)
	got := gather(t, r)
	ok := got.series("crawler_extract_duration_seconds", "role=slave", "slave=3", "result=ok")
	limit := got.series("crawler_extract_duration_seconds", "role=slave", "slave=3", "result=limit")
	if ok == nil || limit == nil || ok.GetHistogram().GetSampleCount() != 2 || limit.GetHistogram().GetSampleCount() != 1 ||
		limit.GetHistogram().GetSampleSum() != 2 {
		t.Errorf("ok %v, limit %v: want 2 ok and one limit of 2s", ok, limit)
	}
}
