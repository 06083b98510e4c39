package slave

import (
	"context"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestMarker: the start marks of tasks whose fetch began are written by
// the marker, and wait returns once its task's is (at once for a task
// never marked). Of deliveries handed back without an outcome, a marked
// one counts toward dead-lettering, an unmarked one does not.
func TestMarker(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runningJob(t, ctx, rdb, keys, "marks", "http://127.0.0.1:1", "/begun", "/waiting")
	s, j := idleSlave(t, ctx, rdb, keys, "marks", jsonlStore(t))
	works := hold(t, ctx, s, j, 2)
	begun, waiting := works[0], works[1]
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.marks.run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })

	s.marks.started(begun)
	s.marks.wait(ctx, begun)
	select {
	case <-begun.marked:
	default:
		t.Fatal("wait returned before the mark was written")
	}
	s.marks.wait(ctx, waiting) // never marked: returns at once
	if _, err := j.queue.Requeue(ctx, []string{begun.raw, waiting.raw}); err != nil {
		t.Fatal(err)
	}
	ds, err := j.queue.Take(ctx, 2, time.Minute)
	if err != nil || len(ds) != 2 {
		t.Fatalf("take again: %+v %v", ds, err)
	}
	counts := map[string]int{}
	for _, d := range ds {
		counts[d.Entry] = d.Count
	}
	if counts[begun.raw] != counts[waiting.raw]+1 {
		t.Errorf("deliveries counted: begun %d, not begun %d; want the begun one's fetch counted, the other's not",
			counts[begun.raw], counts[waiting.raw])
	}
}
