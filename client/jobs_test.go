package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// TestCancel_pendingJob (issue 9, defect 4): a job submitted where no
// master runs (or under another prefix than the masters') is finished by
// client cancel at once, as cancelled, and can then be reset; a pending
// job a master has taken is left to that master to stop.
func TestCancel_pendingJob(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Submit(ctx, testJob("orphan", "https://example.com/")); err != nil {
		t.Fatal(err)
	}
	if finished, err := c.Cancel(ctx, "orphan"); err != nil || !finished {
		t.Fatalf("Cancel of a pending job nobody holds = finished %v, %v; want finished at once", finished, err)
	}
	st, err := c.Status(ctx, "orphan")
	if err != nil {
		t.Fatal(err)
	}
	if st.State != cluster.StateFinished || st.Cancelling || st.CancelledAt == "" || st.FinishedAt == "" {
		t.Errorf("after cancel: state %s, cancelling %v, cancelled at %q, finished at %q; want finished and cancelled",
			st.State, st.Cancelling, st.CancelledAt, st.FinishedAt)
	}
	if _, err := c.Cancel(ctx, "orphan"); !errors.Is(err, ErrJobFinished) {
		t.Errorf("second Cancel = %v, want ErrJobFinished", err)
	}
	if n, err := c.Reset(ctx, "orphan"); err != nil || n == 0 {
		t.Errorf("Reset after the cancel = %d, %v; want the job's keys removed", n, err)
	}

	if err := c.Submit(ctx, testJob("held", "https://example.com/")); err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, keys.Job("held").Owner(), "master-1/abc", time.Minute) // a master took it
	if finished, err := c.Cancel(ctx, "held"); err != nil || finished {
		t.Fatalf("Cancel of a held pending job = finished %v, %v; want asked of its master", finished, err)
	}
	if st, err := c.Status(ctx, "held"); err != nil ||
		st.State != cluster.StatePending || !st.Cancelling {
		t.Errorf("held job after cancel = %+v, %v; want pending and cancelling, for its master to stop", st, err)
	}
	if _, err := c.Reset(ctx, "held"); !errors.Is(err, ErrJobBusy) {
		t.Errorf("Reset of a held pending job = %v, want ErrJobBusy", err)
	}
	if _, err := c.Cancel(ctx, "never"); !errors.Is(err, ErrJobNotFound) {
		t.Errorf("Cancel of an unknown job = %v, want ErrJobNotFound", err)
	}
}
