package metrics

import "github.com/crawler-dev/crawler/cluster"

// DefaultAddr is where `--metrics` serves when given the usual value: the
// loopback interface only. Serving on other interfaces must be asked for.
const DefaultAddr = "127.0.0.1:9090"

// Options configures a Registry. Start from DefaultOptions.
type Options struct {
	// Hosts is how many distinct target hosts get a host label of their
	// own in this process: the first Hosts hosts seen keep it, every later
	// one is counted under host="other". 0 puts every host under "other".
	Hosts int
	// Jobs is how many distinct jobs get a job label of their own in this
	// process; later ones are counted under job="other".
	Jobs int
	// Runtime adds the Go runtime and process collectors (go_*, process_*:
	// CPU seconds, memory, goroutines), which CPU-per-page figures need.
	Runtime bool
}

// Bounds of the labels that callers fill with names of their own: failure
// kinds, politeness reasons, proxy states, robots outcomes and Redis
// commands. Past them a value is counted under "other".
const (
	maxKinds    = 32
	maxReasons  = 16
	maxStates   = 16
	maxCommands = 64
)

// DefaultOptions returns the defaults: 32 hosts, 64 jobs, runtime metrics
// on.
func DefaultOptions() Options {
	return Options{Hosts: 32, Jobs: 64, Runtime: true}
}

// Validate reports the first option out of range as a *cluster.FieldError.
func (o Options) Validate() error {
	switch {
	case o.Hosts < 0 || o.Hosts > 1000:
		return cluster.Invalid("Hosts", o.Hosts, "is outside 0..1000")
	case o.Jobs < 0 || o.Jobs > 1000:
		return cluster.Invalid("Jobs", o.Jobs, "is outside 0..1000")
	}
	return nil
}
