package master

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
)

// TestMaster_AgreeOnConfig: the first master records its routing settings;
// a master with other settings refuses to run, naming the flag.
func TestMaster_AgreeOnConfig(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	failures, err := store.OpenJSONL(filepath.Join(t.TempDir(), "failed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer failures.Close()
	deps := Deps{Redis: rdb, Keys: keys, Failures: failures}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(opts Options) error { // what Run does first; Run returns its error
		m, err := New(opts, deps)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.agreeOnConfig(ctx); err != nil {
			if rerr := m.Run(ctx); rerr == nil || !strings.Contains(rerr.Error(), err.Error()) {
				t.Errorf("Run = %v, want it to refuse with %v", rerr, err)
			}
			return err
		}
		return nil
	}

	opts := func(maxWeight float64, mode string) Options {
		o := DefaultOptions()
		o.MaxWeight, o.AssignMode = maxWeight, mode
		return o
	}
	if err := run(opts(32, "rendezvous")); err != nil {
		t.Fatalf("first master: %v", err)
	}
	if got := rdb.HGet(context.Background(), keys.Nodes().Config(), ConfigMaxWeight).Val(); got != "32" {
		t.Errorf("recorded max_weight %q, want 32", got)
	}
	if err := run(opts(32, "rendezvous")); err != nil {
		t.Errorf("a master with the same settings: %v", err)
	}
	for _, tc := range []struct {
		opts Options
		flag string
	}{
		{opts(64, "rendezvous"), "--max-weight"},
		{opts(32, "paper"), "--assign-mode"},
	} {
		err := run(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("master with %+v: error %v, want one naming %s", tc.opts, err, tc.flag)
		}
	}
}
