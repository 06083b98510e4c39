package slave

import (
	"errors"
	"math"
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
		{"ID", func(o *Options) { o.ID = o.MaxSlaves }},
		{"Concurrency", func(o *Options) { o.Concurrency = 0 }},
		{"Weight", func(o *Options) { o.Weight = math.NaN() }},
		{"Lease", func(o *Options) { o.Lease = time.Millisecond }},
		{"TaskLease", func(o *Options) { o.TaskLease = 500 * time.Millisecond }},
		{"Poll", func(o *Options) { o.Poll = 0 }},
		{"DrainTimeout", func(o *Options) { o.DrainTimeout = -time.Second }},
		{"MaxMemory", func(o *Options) { o.MaxMemory = 1 << 20 }},
		{"MaxDeliveries", func(o *Options) { o.MaxDeliveries = 0 }},
		{"MaxParked", func(o *Options) { o.MaxParked = -1 }},
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
