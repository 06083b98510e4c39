package master

import (
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestOptions_Validate: the defaults are valid; each option out of range
// is refused with an error naming its field.
func TestOptions_Validate(t *testing.T) {
	testenv.RefusesEach(t, DefaultOptions(), Options.Validate, map[string]func(*Options){
		"ID":              func(o *Options) { o.ID = "" },
		"ListConcurrency": func(o *Options) { o.ListConcurrency = 0 },
		"AssignMode":      func(o *Options) { o.AssignMode = "random" },
		"MaxWeight":       func(o *Options) { o.MaxWeight = 0 },
		"JobLease":        func(o *Options) { o.JobLease = time.Millisecond },
		"ListLease":       func(o *Options) { o.ListLease = time.Second },
		"Tick":            func(o *Options) { o.Tick = o.JobLease },
		"MaxMemory":       func(o *Options) { o.MaxMemory = 1 << 20 },
		"DedupCache":      func(o *Options) { o.DedupCache = -1 },
		"MaxDeliveries":   func(o *Options) { o.MaxDeliveries = 0 },
	})
}

// TestNew_refuses: New refuses options out of range, and a master without
// Redis or a failure recorder.
func TestNew_refuses(t *testing.T) {
	f := newFixture(t)
	bad := DefaultOptions()
	bad.ListConcurrency = 0
	for name, tc := range map[string]struct {
		opts Options
		deps Deps
	}{
		"options out of range": {bad, f.m.deps},
		"no Redis":             {DefaultOptions(), Deps{Keys: f.keys, Failures: f.failures}},
		"no failure recorder":  {DefaultOptions(), Deps{Redis: f.rdb, Keys: f.keys}},
	} {
		if _, err := New(tc.opts, tc.deps); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}
