package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/ledger"
)

// TestLedger_Pause pauses and resumes jobs in each state: what is paused
// comes back to the state it was paused in; what cannot be paused or
// resumed is refused with the ledger's sentinel and left as it was.
func TestLedger_Pause(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	rdb, keys := testenv.Redis(t)
	setState := func(t *testing.T, name string, fields ...any) (*ledger.Ledger, cluster.JobKeys) {
		t.Helper()
		jk := keys.Job(name)
		if len(fields) > 0 {
			if err := rdb.HSet(ctx, jk.State(), fields...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		return ledger.New(rdb, jk), jk
	}
	stateOf := func(t *testing.T, jk cluster.JobKeys) map[string]string {
		t.Helper()
		m, err := rdb.HGetAll(ctx, jk.State()).Result()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	for _, from := range []string{cluster.StatePending, cluster.StateRunning} {
		t.Run("paused and resumed from "+from, func(t *testing.T) {
			l, jk := setState(t, "p-"+from, cluster.StateField, from)
			got, err := l.Pause(ctx, now)
			if err != nil || got != from {
				t.Fatalf("Pause = %q, %v; want %q", got, err, from)
			}
			st := stateOf(t, jk)
			if st[cluster.StateField] != cluster.StatePaused || st[cluster.StatePausedAt] != "2026-11-29T12:00:00Z" {
				t.Fatalf("state after pause: %v", st)
			}
			if _, err := l.Pause(ctx, now); !errors.Is(err, ledger.ErrPaused) {
				t.Fatalf("second Pause: %v, want ErrPaused", err)
			}
			if got, err := l.Resume(ctx); err != nil || got != from {
				t.Fatalf("Resume = %q, %v; want %q", got, err, from)
			}
			st = stateOf(t, jk)
			if st[cluster.StateField] != from || st[cluster.StatePausedAt] != "" || st[cluster.StatePausedFrom] != "" {
				t.Fatalf("state after resume: %v", st)
			}
			if _, err := l.Resume(ctx); !errors.Is(err, ledger.ErrNotPaused) {
				t.Fatalf("second Resume: %v, want ErrNotPaused", err)
			}
		})
	}

	t.Run("between rounds", func(t *testing.T) {
		l, jk := setState(t, "rounds", cluster.StateField, cluster.StateFinished, cluster.StateNextRoundAt, "2026-11-29T13:00:00Z")
		if got, err := l.Pause(ctx, now); err != nil || got != cluster.StateFinished {
			t.Fatalf("Pause = %q, %v", got, err)
		}
		if got, err := l.Resume(ctx); err != nil || got != cluster.StateFinished {
			t.Fatalf("Resume = %q, %v", got, err)
		}
		if st := stateOf(t, jk); st[cluster.StateNextRoundAt] != "2026-11-29T13:00:00Z" {
			t.Fatalf("the next round is lost: %v", st)
		}
	})

	t.Run("refused", func(t *testing.T) {
		finished, fk := setState(t, "done", cluster.StateField, cluster.StateFinished)
		none, _ := setState(t, "never")
		for _, c := range []struct {
			name string
			do   func() error
			want error
		}{
			{"pause a finished job", func() error { _, err := finished.Pause(ctx, now); return err }, ledger.ErrFinished},
			{"resume a finished job", func() error { _, err := finished.Resume(ctx); return err }, ledger.ErrNotPaused},
			{"pause a job never submitted", func() error { _, err := none.Pause(ctx, now); return err }, ledger.ErrNoJob},
			{"resume a job never submitted", func() error { _, err := none.Resume(ctx); return err }, ledger.ErrNoJob},
		} {
			if err := c.do(); !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
		}
		if st := stateOf(t, fk); len(st) != 1 {
			t.Errorf("a refused step changed the state: %v", st)
		}
	})

	// A cancel asked while the job is paused wins: resume is refused and
	// changes nothing, and the job ends finished, not paused.
	t.Run("cancel and resume", func(t *testing.T) {
		l, jk := setState(t, "race", cluster.StateField, cluster.StateRunning)
		if err := rdb.Set(ctx, jk.Owner(), "master-1", 0).Err(); err != nil { // a master holds the job
			t.Fatal(err)
		}
		if _, err := l.Pause(ctx, now); err != nil {
			t.Fatal(err)
		}
		if out, err := l.AskCancel(ctx, now); err != nil || out != ledger.CancelAsked {
			t.Fatalf("AskCancel = %v, %v; want asked", out, err)
		}
		before := stateOf(t, jk)
		if _, err := l.Resume(ctx); !errors.Is(err, ledger.ErrCancelling) {
			t.Fatalf("Resume while cancelling: %v, want ErrCancelling", err)
		}
		if _, err := l.Pause(ctx, now); !errors.Is(err, ledger.ErrCancelling) {
			t.Fatalf("Pause while cancelling: %v, want ErrCancelling", err)
		}
		if after := stateOf(t, jk); len(after) != len(before) || after[cluster.StateField] != cluster.StatePaused {
			t.Fatalf("a refused resume changed the state: %v, then %v", before, after)
		}
	})

	t.Run("cancelled while paused with no master", func(t *testing.T) {
		l, jk := setState(t, "orphan", cluster.StateField, cluster.StatePending)
		if _, err := l.Pause(ctx, now); err != nil {
			t.Fatal(err)
		}
		if out, err := l.AskCancel(ctx, now); err != nil || out != ledger.CancelFinished {
			t.Fatalf("AskCancel = %v, %v; want finished here", out, err)
		}
		st := stateOf(t, jk)
		if st[cluster.StateField] != cluster.StateFinished || st[cluster.StatePausedFrom] != "" {
			t.Fatalf("state after cancel: %v", st)
		}
	})
}
