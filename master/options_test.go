package master

import (
	"errors"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// TestOptions_Validate: the defaults are valid; each option out of range
// is refused with an error naming its field, and New refuses it too.
func TestOptions_Validate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		field string
		edit  func(*Options)
	}{
		{"ID", func(o *Options) { o.ID = "" }},
		{"ListConcurrency", func(o *Options) { o.ListConcurrency = 0 }},
		{"AssignMode", func(o *Options) { o.AssignMode = "random" }},
		{"MaxWeight", func(o *Options) { o.MaxWeight = 0 }},
		{"JobLease", func(o *Options) { o.JobLease = time.Millisecond }},
		{"ListLease", func(o *Options) { o.ListLease = time.Second }},
		{"Tick", func(o *Options) { o.Tick = o.JobLease }},
		{"MaxMemory", func(o *Options) { o.MaxMemory = 1 << 20 }},
		{"DedupCache", func(o *Options) { o.DedupCache = -1 }},
		{"MaxDeliveries", func(o *Options) { o.MaxDeliveries = 0 }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			o := DefaultOptions()
			tc.edit(&o)
			var fe *cluster.FieldError
			if err := o.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("Validate = %v, want a FieldError naming %s", err, tc.field)
			}
			if _, err := New(o, Deps{}); err == nil {
				t.Error("New accepted the options")
			}
		})
	}
}

// TestNew_deps: a master needs Redis and a failure recorder.
func TestNew_deps(t *testing.T) {
	f := newFixture(t)
	for name, deps := range map[string]Deps{
		"no Redis":            {Keys: f.keys, Failures: f.failures},
		"no failure recorder": {Redis: f.rdb, Keys: f.keys},
	} {
		if _, err := New(DefaultOptions(), deps); err == nil {
			t.Errorf("%s: New accepted the deps", name)
		}
	}
}
