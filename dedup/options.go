package dedup

import (
	"errors"
	"fmt"
	"time"
)

// Mode selects how a Filter remembers fingerprints.
type Mode string

// The Filter modes.
const (
	// ModeBloom is the expiring multi-Bloom filter: one Redis string per
	// time granule, each expiring on its own. Compact; false positives at
	// the configured rate; never false negatives inside the window.
	ModeBloom Mode = "bloom"
	// ModeExact keeps each fingerprint with its expiry time in a sorted
	// set. No false positives; memory grows with distinct URLs per window.
	ModeExact Mode = "exact"
	// ModeSet is scrapy-redis's plain SET of 40-hex fingerprints, never
	// expiring. Kept as the baseline to compare with.
	ModeSet Mode = "set"
)

// DefaultMaxBlockBits is the largest bloom block: one Redis string holds at
// most 2^32 bits (512 MB).
const DefaultMaxBlockBits uint64 = 1 << 32

// ErrInvalidOptions is wrapped by every error Options.Validate returns.
var ErrInvalidOptions = errors.New("invalid dedup options")

// Options configures a Filter.
type Options struct {
	// Mode is bloom (the default when empty), exact or set.
	Mode Mode
	// Namespace is the stem of every key the filter uses, e.g.
	// cluster.Keys{}.Job("news").Dedup(); it carries the job's hash tag.
	Namespace string
	// Window is how long a fingerprint is remembered (bloom and exact).
	Window time.Duration
	// Granularity is the length of one bloom slice; Window must be a
	// multiple of it. A fingerprint is new again at most Window +
	// Granularity after it was last admitted.
	Granularity time.Duration
	// Capacity is the number of fingerprints one bloom slice holds at
	// ErrorRate.
	Capacity int64
	// ErrorRate is the total false-positive rate of a check across all
	// live slices (each slice is sized for ErrorRate / (slices)).
	ErrorRate float64
	// MaxBlockBits caps the bits of one Redis string; bigger slices are
	// split into blocks by fingerprint prefix. 0 means DefaultMaxBlockBits;
	// at least 1024, one line of the blocked filter.
	MaxBlockBits uint64
	// Now gives the time; nil uses the Redis server's clock (TIME inside
	// the script), so masters whose clocks disagree still agree on slices.
	Now func() time.Time
}

// withDefaults fills the zero Mode and MaxBlockBits.
func (o Options) withDefaults() Options {
	if o.Mode == "" {
		o.Mode = ModeBloom
	}
	if o.MaxBlockBits == 0 {
		o.MaxBlockBits = DefaultMaxBlockBits
	}
	return o
}

// Validate reports the first field that is out of range, by name.
func (o Options) Validate() error {
	o = o.withDefaults()
	if err := o.validateCommon(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	if o.Mode != ModeBloom {
		return nil
	}
	if err := o.validateBloom(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	return nil
}

func (o Options) validateCommon() error {
	switch {
	case o.Mode != ModeBloom && o.Mode != ModeExact && o.Mode != ModeSet:
		return fmt.Errorf("Mode: %q is not bloom, exact or set", o.Mode)
	case o.Namespace == "":
		return errors.New("Namespace: empty")
	case o.Mode != ModeSet && o.Window < time.Millisecond:
		return fmt.Errorf("Window: %v is below 1ms", o.Window)
	}
	return nil
}

func (o Options) validateBloom() error {
	switch {
	case o.Granularity < time.Millisecond || o.Granularity%time.Millisecond != 0:
		return fmt.Errorf("Granularity: %v is not a whole number of milliseconds", o.Granularity)
	case o.Window%o.Granularity != 0:
		return fmt.Errorf("Window: %v is not a multiple of Granularity %v", o.Window, o.Granularity)
	case o.Capacity <= 0:
		return fmt.Errorf("Capacity: %d is not positive", o.Capacity)
	case !(o.ErrorRate > 0 && o.ErrorRate < 1):
		return fmt.Errorf("ErrorRate: %v is not in (0, 1)", o.ErrorRate)
	case o.MaxBlockBits < lineBits || o.MaxBlockBits > DefaultMaxBlockBits:
		return fmt.Errorf("MaxBlockBits: %d is not in [%d, 2^32]", o.MaxBlockBits, lineBits)
	}
	return nil
}
