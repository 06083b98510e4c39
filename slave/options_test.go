package slave

import (
	"math"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestOptions_Validate: the defaults are valid; each option out of range
// is refused with an error naming its field.
func TestOptions_Validate(t *testing.T) {
	testenv.RefusesEach(t, DefaultOptions(), Options.Validate, map[string]func(*Options){
		"ID":            func(o *Options) { o.ID = o.MaxSlaves },
		"Concurrency":   func(o *Options) { o.Concurrency = 0 },
		"Weight":        func(o *Options) { o.Weight = math.NaN() },
		"Lease":         func(o *Options) { o.Lease = time.Millisecond },
		"TaskLease":     func(o *Options) { o.TaskLease = 500 * time.Millisecond },
		"Poll":          func(o *Options) { o.Poll = 0 },
		"DrainTimeout":  func(o *Options) { o.DrainTimeout = -time.Second },
		"MaxMemory":     func(o *Options) { o.MaxMemory = 1 << 20 },
		"MaxDeliveries": func(o *Options) { o.MaxDeliveries = 0 },
		"MaxParked":     func(o *Options) { o.MaxParked = -1 },
	})
}
