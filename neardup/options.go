package neardup

import (
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
)

// MaxDistance is the largest Hamming distance the index can find: a hash
// is cut into 4 bands of 16 bits, and two hashes at most 3 bits apart
// share at least one band unchanged (pigeonhole), so only the entries of
// a hash's own 4 band values need comparing.
const MaxDistance = 3

// MaxWindow bounds Options.Window.
const MaxWindow = 10 * 365 * 24 * time.Hour

// Options configures an Index.
type Options struct {
	// Namespace is the stem of every key the index uses, e.g.
	// cluster.Keys{}.Job("news").Simhash(); it carries the job's hash tag.
	Namespace string
	// Window is how long an entry is remembered after its last add: the
	// job's dedup window, so that content fetched again after it is not
	// compared with what the job stored a window ago.
	Window time.Duration
	// Distance is the largest Hamming distance between two simhashes that
	// counts as the same content, 0..MaxDistance; 0 finds identical hashes
	// only.
	Distance int
	// Now gives the time; nil uses the Redis server's clock (TIME inside
	// the script), the one clock every slave shares. For tests.
	Now func() time.Time
}

// DefaultOptions returns the options for namespace and window with the
// default Distance, MaxDistance.
func DefaultOptions(namespace string, window time.Duration) Options {
	return Options{Namespace: namespace, Window: window, Distance: MaxDistance}
}

// JobOptions returns the options of a job's index: its dedup window, under
// keys.Simhash().
func JobOptions(spec jobspec.DedupSpec, keys cluster.JobKeys) Options {
	return DefaultOptions(keys.Simhash(), spec.Window.Std())
}

// Validate reports the first option out of range as a *cluster.FieldError.
func (o Options) Validate() error {
	switch {
	case o.Namespace == "":
		return cluster.Invalid("Namespace", `""`, "is empty")
	case o.Window < time.Millisecond || o.Window > MaxWindow:
		return cluster.Invalid("Window", o.Window, "is outside 1ms..%v", MaxWindow)
	case o.Window%time.Millisecond != 0:
		return cluster.Invalid("Window", o.Window, "is not a whole number of milliseconds")
	case o.Distance < 0 || o.Distance > MaxDistance:
		return cluster.Invalid("Distance", o.Distance, "is outside 0..%d", MaxDistance)
	}
	return nil
}
