package ledger_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
)

// TestLedger_outbox: a pause, and a cancel that finishes a job, append
// their events to the outbox in the same step, with the state and counters
// they left, numbered in order; RecordEvent records for a job that does
// not exist nothing.
func TestLedger_outbox(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx := context.Background()
	jk := keys.Job("news")
	led := ledger.New(rdb, jk)
	if _, err := led.Submit(ctx, []byte(`{"name":"news"}`), jk.SeedsStaging("t"), time.Now()); err != nil {
		t.Fatal(err)
	}
	rdb.HSet(ctx, jk.Stats(), cluster.StatStored, 3)
	if from, err := led.Pause(ctx, time.Now()); err != nil || from != cluster.StatePending {
		t.Fatalf("Pause = %q, %v; want paused from pending", from, err)
	}
	if out, err := led.AskCancel(ctx, time.Now()); err != nil || out != ledger.CancelFinished {
		t.Fatalf("AskCancel = %v, %v; want the pending job finished here", out, err)
	}
	entries := rdb.LRange(ctx, jk.Outbox(), 0, -1).Val()
	if len(entries) != 2 {
		t.Fatalf("outbox = %q, want 2 events", entries)
	}
	var paused, cancelled cluster.OutboxEvent
	if err := json.Unmarshal([]byte(entries[0]), &paused); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(entries[1]), &cancelled); err != nil {
		t.Fatal(err)
	}
	if paused.ID != 1 || paused.Event != jobspec.EventPaused || paused.State[cluster.StateField] != cluster.StatePaused ||
		paused.Stats[cluster.StatStored] != "3" {
		t.Errorf("first event = %+v", paused)
	}
	if cancelled.ID != 2 || cancelled.Event != jobspec.EventCancelled || cancelled.State[cluster.StateField] != cluster.StateFinished ||
		cancelled.State[cluster.StateCancelledAt] == "" || cancelled.Stats[cluster.StatStored] != "3" || cancelled.At == "" {
		t.Errorf("second event = %+v", cancelled)
	}
	gone := ledger.New(rdb, keys.Job("gone"))
	if id, err := gone.RecordEvent(ctx, jobspec.EventPaused, time.Now()); err != nil || id != 0 {
		t.Errorf("RecordEvent on no job = %d, %v; want 0, nil", id, err)
	}
	if n := rdb.Exists(ctx, keys.Job("gone").Outbox()).Val(); n != 0 {
		t.Error("an event was recorded for a job that does not exist")
	}
}

// TestLedger_outboxBounded: an outbox nobody sends keeps the newest
// OutboxMax events.
func TestLedger_outboxBounded(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx := context.Background()
	jk := keys.Job("news")
	led := ledger.New(rdb, jk)
	if _, err := led.Submit(ctx, []byte(`{"name":"news"}`), jk.SeedsStaging("t"), time.Now()); err != nil {
		t.Fatal(err)
	}
	for range ledger.OutboxMax + 5 {
		if _, err := led.RecordEvent(ctx, jobspec.EventPaused, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	entries := rdb.LRange(ctx, jk.Outbox(), 0, 0).Val()
	var first cluster.OutboxEvent
	if n := rdb.LLen(ctx, jk.Outbox()).Val(); n != ledger.OutboxMax || len(entries) != 1 || json.Unmarshal([]byte(entries[0]), &first) != nil || first.ID != 6 {
		t.Errorf("outbox holds %d events, the oldest %+v; want %d from event 6", n, first, ledger.OutboxMax)
	}
}
