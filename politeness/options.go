package politeness

import (
	"math"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// Options configures a Budget. Start from DefaultOptions.
type Options struct {
	// Keys names the Redis keys the cluster shares.
	Keys cluster.Keys
	// DefaultRPS is the rate per host when a Rule gives neither RPS nor
	// CrawlDelay.
	DefaultRPS float64
	// LeaseTTL is how long a lease counts against the concurrency cap
	// without being renewed; a lease of a process that died frees after it.
	LeaseTTL time.Duration
	// FullWait is the longest wait Acquire suggests when the concurrency
	// cap is full (a lease may be released any moment).
	FullWait time.Duration
	// StateTTL is how long an idle host's rate state, its backoff
	// included, is remembered.
	StateTTL time.Duration
	// Cut multiplies a host's rate on a 429 or 503 (multiplicative
	// decrease).
	Cut float64
	// CutEvery is the least time between two cuts, so a volley of 429s
	// from requests already in flight counts as one.
	CutEvery time.Duration
	// Raise is added to a backed-off host's rate factor (1 = the rule's
	// full rate) on every success (additive increase).
	Raise float64
	// MinFactor is the lowest the rate factor goes.
	MinFactor float64
	// MaxWant caps the leases one host may be asked for in one call.
	MaxWant int
	// MaxPause caps a pause a site asks for with Retry-After.
	MaxPause time.Duration
}

// DefaultOptions returns the defaults: DefaultRPS 1, LeaseTTL 2m, FullWait
// 100ms, StateTTL 1h, Cut 0.5, CutEvery 1s, Raise 0.02 (from half rate back
// to full in 25 successes), MinFactor 1/64, MaxWant 256, MaxPause 1h.
func DefaultOptions() Options {
	return Options{
		DefaultRPS: 1,
		LeaseTTL:   2 * time.Minute,
		FullWait:   100 * time.Millisecond,
		StateTTL:   time.Hour,
		Cut:        0.5,
		CutEvery:   time.Second,
		Raise:      0.02,
		MinFactor:  1.0 / 64,
		MaxWant:    256,
		MaxPause:   time.Hour,
	}
}

// Validate reports the first option out of range as a *cluster.FieldError.
func (o Options) Validate() error {
	switch {
	case !(o.DefaultRPS > 0 && o.DefaultRPS <= MaxRPS):
		return cluster.Invalid("DefaultRPS", o.DefaultRPS, "is outside (0, %g]", float64(MaxRPS))
	case o.LeaseTTL < 10*time.Millisecond || o.LeaseTTL > 24*time.Hour:
		return cluster.Invalid("LeaseTTL", o.LeaseTTL, "is outside 10ms..24h")
	case o.FullWait < time.Millisecond || o.FullWait > time.Minute:
		return cluster.Invalid("FullWait", o.FullWait, "is outside 1ms..1m")
	case o.StateTTL < time.Second || o.StateTTL > 30*24*time.Hour:
		return cluster.Invalid("StateTTL", o.StateTTL, "is outside 1s..720h")
	case !(o.Cut > 0 && o.Cut <= 1):
		return cluster.Invalid("Cut", o.Cut, "is outside (0, 1]")
	case o.CutEvery < 0 || o.CutEvery > time.Hour:
		return cluster.Invalid("CutEvery", o.CutEvery, "is outside 0..1h")
	case !(o.Raise >= 0 && o.Raise <= 1):
		return cluster.Invalid("Raise", o.Raise, "is outside 0..1")
	case !(o.MinFactor > 0 && o.MinFactor <= 1):
		return cluster.Invalid("MinFactor", o.MinFactor, "is outside (0, 1]")
	case o.MaxWant < 1 || o.MaxWant > 10000:
		return cluster.Invalid("MaxWant", o.MaxWant, "is outside 1..10000")
	case o.MaxPause < 0 || o.MaxPause > 7*24*time.Hour:
		return cluster.Invalid("MaxPause", o.MaxPause, "is outside 0..168h")
	}
	return nil
}

// MaxRPS is the highest rate a Rule or DefaultRPS may ask for.
const MaxRPS = 100000

// Rule is how hard the cluster may press one host. The job file's
// per_host_rps and per_host_concurrency and robots.txt's Crawl-delay fill
// it in.
type Rule struct {
	// RPS is the requests per second the whole cluster may send to the
	// host; 0 means one per CrawlDelay if there is one, else
	// Options.DefaultRPS.
	RPS float64
	// Burst is how many requests may go at once after a quiet spell; 0
	// means 1 (evenly spaced).
	Burst int
	// Concurrency is how many requests may be in flight to the host at
	// once, cluster-wide; 0 means DefaultConcurrency.
	Concurrency int
	// CrawlDelay is robots.txt's Crawl-delay: with it, at most one request
	// starts per CrawlDelay (it caps RPS and forces Burst to 1).
	CrawlDelay time.Duration
}

// DefaultConcurrency is the cap of a Rule with Concurrency 0.
const DefaultConcurrency = 8

// Validate reports the first field out of range as a *cluster.FieldError.
func (r Rule) Validate() error {
	switch {
	case !(r.RPS >= 0 && r.RPS <= MaxRPS):
		return cluster.Invalid("RPS", r.RPS, "is outside 0..%g", float64(MaxRPS))
	case r.Burst < 0 || r.Burst > 10000:
		return cluster.Invalid("Burst", r.Burst, "is outside 0..10000")
	case r.Concurrency < 0 || r.Concurrency > 100000:
		return cluster.Invalid("Concurrency", r.Concurrency, "is outside 0..100000")
	case r.CrawlDelay < 0 || r.CrawlDelay > 24*time.Hour:
		return cluster.Invalid("CrawlDelay", r.CrawlDelay, "is outside 0..24h")
	}
	return nil
}

// limits are a Rule with its defaults applied: the time between two
// requests at full rate (ms), the burst and the concurrency cap.
type limits struct {
	intervalMS float64
	burst      int
	cap        int
}

func (r Rule) limits(defaultRPS float64) limits {
	rps := r.RPS
	if rps == 0 {
		rps = defaultRPS
		if r.CrawlDelay > 0 {
			rps = math.Inf(1) // the delay alone sets the pace
		}
	}
	l := limits{intervalMS: 1000 / rps, burst: max(r.Burst, 1), cap: r.Concurrency}
	if l.cap == 0 {
		l.cap = DefaultConcurrency
	}
	if r.CrawlDelay > 0 {
		l.intervalMS = max(l.intervalMS, float64(r.CrawlDelay)/float64(time.Millisecond))
		l.burst = 1
	}
	return l
}
