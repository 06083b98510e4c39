package dedup

import (
	"errors"
	"fmt"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
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

// SmallBlockBits is the MinBlockBits that suits a Redis which copies a
// whole string on every write (miniredis, the in-process Redis of crawler
// run): there crawler run's default job measured 40 links/s with one 24 MB
// block per slice, and about 5000 with blocks of 2^16..2^18 bits (16 KB),
// as fast as a slice a thousand times smaller; below that, the keys each
// call names cost more than the copies they save.
const SmallBlockBits uint64 = 1 << 17

// Hard bounds of Options, whatever Redis could hold: past them a filter
// would name more keys than a script call can carry, or size slices no
// Redis has memory for. Validate rejects them before anything is built.
const (
	// MaxCapacity is the most fingerprints one slice (granule) may be
	// sized for: 10^10, about 24 GB per bloom slice at ε = 0.001/8.
	MaxCapacity int64 = 10_000_000_000
	// MaxSlices is the most slices (Window/Granularity + 1) one check may
	// read.
	MaxSlices = 1024
	// MaxSliceKeys bounds (Slices + 3) × Blocks, the most bloom keys one
	// call may name: every block of the slices a check reads, of the next
	// one (prepared ahead), and of one more on each side when the server's
	// clock is guessed.
	MaxSliceKeys = 65536
	// MinErrorRate is the lowest ErrorRate: below it (split over up to
	// MaxSlices slices) the blocked layout cannot be sized to the rate.
	MinErrorRate = 1e-9
)

// ErrInvalidOptions is wrapped by every error Options.Validate returns,
// together with a *cluster.FieldError that names the field.
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
	// Granularity after it was last admitted. Exact mode uses it only to
	// size its memory (EstimateBytes).
	Granularity time.Duration
	// Capacity is the number of fingerprints one slice (one Granularity
	// of traffic) holds at ErrorRate, 1..MaxCapacity. Set mode may leave it
	// 0: it is only used there to estimate memory.
	Capacity int64
	// ErrorRate is the total false-positive rate of a check across all
	// live slices (each slice is sized for ErrorRate / (slices)).
	ErrorRate float64
	// MaxBlockBits caps the bits of one Redis string; bigger slices are
	// split into blocks by fingerprint. 0 means DefaultMaxBlockBits, or
	// the size MinBlockBits picks; at least 1024, one line of the blocked
	// filter. It changes only the layout, not what the filter answers, but
	// every master of a job must use the same.
	MaxBlockBits uint64
	// MinBlockBits, when not 0 and MaxBlockBits is 0, makes a bloom
	// filter split its slices into blocks as small as it can: MinBlockBits
	// times the smallest power of two whose blocks fit MaxSliceKeys (see
	// SmallBlockBits). 0 keeps DefaultMaxBlockBits. Like MaxBlockBits it
	// changes only the layout.
	MinBlockBits uint64
	// CreateOnWrite makes Prepare create no bloom block ahead: each block
	// is created by its first write, so a short crawl holds only the
	// blocks it wrote. Creating ahead spares Redis the stall of allocating
	// a large key on a write; with small blocks (MinBlockBits) there is no
	// such stall. What the filter answers is the same either way.
	CreateOnWrite bool
	// CacheBytes bounds the process memory a bloom filter may fill with
	// copies of its slices, which Prepare keeps up to date: the current
	// slice, which the filter claims as its writer so that it checks it in
	// process and writes new fingerprints without reading their lines, and
	// sealed slices (SealMargin after their granule), which it checks in
	// process alone. A whole window takes about EstimateBytes. 0 keeps
	// nothing: every check runs in Redis. What the filter answers is the
	// same either way. A master should give DefaultCacheBytes, and 0 when
	// Redis runs inside the master's own process (an in-process miniredis
	// already holds the slices in memory).
	CacheBytes int64
	// Now gives the time; nil uses the Redis server's clock (TIME inside
	// the script), so masters whose clocks disagree still agree on slices.
	// Every filter writing the same slices must use the same clock.
	Now func() time.Time
}

// JobOptions returns the options of a job's detail-page dupefilter, as the
// job spec sets them, under keys.Dedup(). The master builds its Filter
// from them and the client estimates their memory before it submits.
func JobOptions(spec jobspec.DedupSpec, keys cluster.JobKeys) Options {
	return Options{Mode: Mode(spec.Mode), Namespace: keys.Dedup(), Window: spec.Window.Std(),
		Granularity: spec.Granularity.Std(), Capacity: spec.Capacity, ErrorRate: spec.ErrorRate}
}

// withDefaults fills the zero Mode and MaxBlockBits; o must be valid but
// for those.
func (o Options) withDefaults() Options {
	if o.Mode == "" {
		o.Mode = ModeBloom
	}
	switch {
	case o.MaxBlockBits != 0:
	case o.MinBlockBits != 0 && o.Mode == ModeBloom:
		o.MaxBlockBits = o.smallestBlockBits()
	default:
		o.MaxBlockBits = DefaultMaxBlockBits
	}
	return o
}

// smallestBlockBits is MinBlockBits times the smallest power of two whose
// blocks fit MaxSliceKeys.
func (o Options) smallestBlockBits() uint64 {
	bits := o.MinBlockBits
	for ; bits < DefaultMaxBlockBits; bits <<= 1 {
		o.MaxBlockBits = bits
		if newBloomShape(o).keysPerCall() <= MaxSliceKeys {
			break
		}
	}
	return bits
}

// invalid is Validate's error: ErrInvalidOptions and a cluster.FieldError.
func invalid(field string, value any, problem string, args ...any) error {
	return fmt.Errorf("%w: %w", ErrInvalidOptions, cluster.Invalid(field, value, problem, args...))
}

// Validate reports the first field that is out of range, by name (see
// ErrInvalidOptions), including the hard bounds MaxCapacity, MaxSlices and
// MaxSliceKeys.
func (o Options) Validate() error {
	if o.Mode == "" {
		o.Mode = ModeBloom
	}
	if err := o.validateCommon(); err != nil {
		return err
	}
	switch o.Mode {
	case ModeBloom:
		return o.validateBloom()
	case ModeExact:
		return o.validateSlices()
	}
	return nil
}

func (o Options) validateCommon() error {
	switch {
	case o.Mode != ModeBloom && o.Mode != ModeExact && o.Mode != ModeSet:
		return invalid("Mode", fmt.Sprintf("%q", o.Mode), "is not bloom, exact or set")
	case o.Namespace == "":
		return invalid("Namespace", `""`, "is empty")
	case o.Mode != ModeSet && o.Window < time.Millisecond:
		return invalid("Window", o.Window, "is below 1ms")
	case o.Capacity < 0 || o.Capacity > MaxCapacity || o.Capacity == 0 && o.Mode != ModeSet:
		return invalid("Capacity", o.Capacity, "is outside 1..%d", MaxCapacity)
	case o.CacheBytes < 0:
		return invalid("CacheBytes", o.CacheBytes, "is negative")
	case o.MinBlockBits != 0 && (o.MinBlockBits < lineBits || o.MinBlockBits > DefaultMaxBlockBits):
		return invalid("MinBlockBits", o.MinBlockBits, "is outside %d..2^32", lineBits)
	}
	return nil
}

// validateSlices checks Granularity and the number of slices it makes.
func (o Options) validateSlices() error {
	switch {
	case o.Granularity < time.Millisecond || o.Granularity%time.Millisecond != 0:
		return invalid("Granularity", o.Granularity, "is not a whole number of milliseconds")
	case o.Mode == ModeBloom && o.Window%o.Granularity != 0:
		return invalid("Window", o.Window, "is not a multiple of Granularity %v", o.Granularity)
	case o.slices() > MaxSlices:
		return invalid("Granularity", o.Granularity, "makes %d slices of Window %v, above %d", o.slices(), o.Window, MaxSlices)
	}
	return nil
}

// slices is the number of granules a window spans, plus the current one.
func (o Options) slices() int64 {
	return int64((o.Window+o.Granularity-1)/o.Granularity) + 1
}

func (o Options) validateBloom() error {
	if err := o.validateSlices(); err != nil {
		return err
	}
	if !(o.ErrorRate >= MinErrorRate && o.ErrorRate < 1) {
		return invalid("ErrorRate", o.ErrorRate, "is outside [%g, 1)", MinErrorRate)
	}
	o = o.withDefaults()
	if o.MaxBlockBits < lineBits || o.MaxBlockBits > DefaultMaxBlockBits {
		return invalid("MaxBlockBits", o.MaxBlockBits, "is outside %d..2^32", lineBits)
	}
	s := newBloomShape(o)
	if keys := s.keysPerCall(); keys > MaxSliceKeys {
		return invalid("Capacity", o.Capacity, "needs %d blocks of %d bits per slice: %d keys for %d slices, above %d (raise MaxBlockBits or lower Capacity)",
			s.blocks, o.MaxBlockBits, keys, s.lookback+1, MaxSliceKeys)
	}
	return nil
}
