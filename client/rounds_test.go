package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// TestCancel_betweenRounds (issue 21): a recurring job waiting for its
// next round is finished but not done with; client cancel stops it: at
// once when no master holds it, else by asking its master.
func TestCancel_betweenRounds(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	between := func(name string) {
		if err := c.Submit(ctx, testJob(name, "https://example.com/")); err != nil {
			t.Fatal(err)
		}
		rdb.HSet(ctx, keys.Job(name).State(), cluster.StateField, cluster.StateFinished, cluster.StateRound, 1,
			cluster.StateFinishedAt, "2026-01-01T03:10:00Z", cluster.StateNextRoundAt, "2026-01-02T03:00:00Z")
	}

	between("nightly")
	if finished, err := c.Cancel(ctx, "nightly"); err != nil || !finished {
		t.Fatalf("Cancel between rounds, no master = finished %v, %v; want finished at once", finished, err)
	}
	st, err := c.Status(ctx, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if st.NextRoundAt != "" || st.CancelledAt == "" || st.State != cluster.StateFinished {
		t.Errorf("after cancel: state %s, next round %q, cancelled at %q; want finished, cancelled, no next round",
			st.State, st.NextRoundAt, st.CancelledAt)
	}
	if _, err := c.Cancel(ctx, "nightly"); !errors.Is(err, ErrJobFinished) {
		t.Errorf("second Cancel = %v, want ErrJobFinished", err)
	}

	between("held")
	rdb.Set(ctx, keys.Job("held").Owner(), "master-1/abc", time.Minute)
	if finished, err := c.Cancel(ctx, "held"); err != nil || finished {
		t.Fatalf("Cancel between rounds of a held job = finished %v, %v; want asked of its master", finished, err)
	}
	if st, err := c.Status(ctx, "held"); err != nil || !st.Cancelling {
		t.Errorf("held job after cancel = %+v, %v; want cancelling, for its master to stop", st, err)
	}
}
