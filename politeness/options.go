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
	// Shards is how many shards the hosts' budgets are kept in (see
	// cluster.Keys.Politeness); 0 means 1 on a single Redis server and
	// ClusterShards on a Redis Cluster. Every process of a cluster must
	// use the same number.
	Shards int
	// DefaultRPS is the rate per host when a Rule gives neither RPS nor
	// CrawlDelay.
	DefaultRPS float64
	// LeaseTTL is how long a process's slots of the hosts' caps stay its
	// own without a round: the slots of a process that dies, or cannot
	// reach Redis, free after it, for every host at once. A process that
	// cannot renew them in time starts no request on them.
	LeaseTTL time.Duration
	// Heartbeat is how often a process that holds slots but had no round
	// for other reasons renews them, in one round trip for all its hosts.
	Heartbeat time.Duration
	// Contended is how often a process whose requests wait for slots
	// while others hold more than their fair share asks again, and how
	// often it tells the answers of a host being slowed.
	Contended time.Duration
	// Linger is how long a process keeps slots it no longer uses: a master
	// between two levels of list pages, or a slave between two takes,
	// keeps its share instead of asking for it again. Short, because a
	// slave whose queue ran dry holds slots that a slave still working
	// needs.
	Linger time.Duration
	// Horizon is how far ahead of Redis's clock a process may book times
	// to send requests at, beyond the first of each ask (which it always
	// gets, however far the host is booked): a request waits at most
	// about this long behind the other processes' bookings, and a pause
	// or a backoff cut reaches the others within it.
	Horizon time.Duration
	// MinRound is the least time between two rounds of a process but for
	// urgent ones (a pause to tell): what one process needs from many
	// hosts meanwhile goes to Redis in one round trip.
	MinRound time.Duration
	// Batch is how far ahead a round settles what hosts will need: a host
	// whose booked times run out within it books more in this round, not
	// in one of its own, so a process with many slow hosts pays a round
	// trip for many of them.
	Batch time.Duration
	// MaxLate is the longest after its booked time a request may still
	// be sent (at most a quarter of the host's interval); a booking not
	// used by then is dropped. The burst a host is booked with is cut by
	// what that lateness is worth at its rate, so that late requests never
	// add up to more than the rule allows in any span of time.
	MaxLate time.Duration
	// MaxBook caps the times a process books for one host in one round.
	MaxBook int
	// StateTTL is how long an idle host's rate state, its backoff
	// included, is remembered.
	StateTTL time.Duration
	// Cut multiplies a host's rate when it throttles (multiplicative
	// decrease).
	Cut float64
	// CutEvery is the least time between two cuts, so a volley of 429s
	// from requests already in flight counts as one.
	CutEvery time.Duration
	// Window is the span of recent answers that decides a cut.
	Window time.Duration
	// CutThrottled is the fewest throttled answers (429, 503) in a Window
	// that cut a host's rate, and CutShare the least share of the
	// window's answers they must be: one flaky URL's 503 among many good
	// answers does not slow a whole site.
	CutThrottled int
	// CutShare: see CutThrottled.
	CutShare float64
	// Raise is added to a backed-off host's rate factor (1 = the rule's
	// full rate) on every good answer (additive increase).
	Raise float64
	// MinFactor is the lowest the rate factor goes.
	MinFactor float64
	// MaxPause caps a pause a site asks for with Retry-After.
	MaxPause time.Duration
}

// ClusterShards is the number of shards of Options.Shards 0 on a Redis
// Cluster: enough to spread the hosts' budgets over its masters.
const ClusterShards = 16

// DefaultOptions returns the defaults: DefaultRPS 1, LeaseTTL 5s,
// Heartbeat 1s, Contended 100ms, Linger 500ms, Horizon 1s, MinRound
// 20ms, Batch 200ms, MaxLate 25ms, MaxBook 1024, StateTTL 1h, Cut 0.5,
// CutEvery 1s, Window 2s, CutThrottled 3, CutShare 0.2, Raise 0.02 (from
// half rate back to full in 25 good answers), MinFactor 1/64, MaxPause 1h.
func DefaultOptions() Options {
	return Options{
		DefaultRPS:   1,
		LeaseTTL:     5 * time.Second,
		Heartbeat:    time.Second,
		Contended:    100 * time.Millisecond,
		Linger:       500 * time.Millisecond,
		Horizon:      time.Second,
		MinRound:     20 * time.Millisecond,
		Batch:        200 * time.Millisecond,
		MaxLate:      25 * time.Millisecond,
		MaxBook:      1024,
		StateTTL:     time.Hour,
		Cut:          0.5,
		CutEvery:     time.Second,
		Window:       2 * time.Second,
		CutThrottled: 3,
		CutShare:     0.2,
		Raise:        0.02,
		MinFactor:    1.0 / 64,
		MaxPause:     time.Hour,
	}
}

// Validate reports the first option out of range as a *cluster.FieldError.
func (o Options) Validate() error {
	if err := o.validateTimes(); err != nil {
		return err
	}
	switch {
	case o.Shards < 0 || o.Shards > 1024:
		return cluster.Invalid("Shards", o.Shards, "is outside 0..1024")
	case !(o.DefaultRPS > 0 && o.DefaultRPS <= MaxRPS):
		return cluster.Invalid("DefaultRPS", o.DefaultRPS, "is outside (0, %g]", float64(MaxRPS))
	case o.MaxBook < 1 || o.MaxBook > 100000:
		return cluster.Invalid("MaxBook", o.MaxBook, "is outside 1..100000")
	case !(o.Cut > 0 && o.Cut <= 1):
		return cluster.Invalid("Cut", o.Cut, "is outside (0, 1]")
	case o.CutThrottled < 1 || o.CutThrottled > 1000:
		return cluster.Invalid("CutThrottled", o.CutThrottled, "is outside 1..1000")
	case !(o.CutShare >= 0 && o.CutShare <= 1):
		return cluster.Invalid("CutShare", o.CutShare, "is outside 0..1")
	case !(o.Raise >= 0 && o.Raise <= 1):
		return cluster.Invalid("Raise", o.Raise, "is outside 0..1")
	case !(o.MinFactor > 0 && o.MinFactor <= 1):
		return cluster.Invalid("MinFactor", o.MinFactor, "is outside (0, 1]")
	}
	return nil
}

// validateTimes reports the first duration out of range.
func (o Options) validateTimes() error {
	switch {
	case o.LeaseTTL < 10*time.Millisecond || o.LeaseTTL > time.Hour:
		return cluster.Invalid("LeaseTTL", o.LeaseTTL, "is outside 10ms..1h")
	case o.Heartbeat < time.Millisecond || o.Heartbeat > o.LeaseTTL/2:
		return cluster.Invalid("Heartbeat", o.Heartbeat, "is outside 1ms..LeaseTTL/2 (%s)", o.LeaseTTL/2)
	case o.Contended < time.Millisecond || o.Contended > o.Heartbeat:
		return cluster.Invalid("Contended", o.Contended, "is outside 1ms..Heartbeat (%s)", o.Heartbeat)
	case o.Linger < 0 || o.Linger > time.Hour:
		return cluster.Invalid("Linger", o.Linger, "is outside 0..1h")
	case o.Horizon < time.Millisecond || o.Horizon > time.Hour:
		return cluster.Invalid("Horizon", o.Horizon, "is outside 1ms..1h")
	case o.MinRound < 0 || o.MinRound > o.Heartbeat:
		return cluster.Invalid("MinRound", o.MinRound, "is outside 0..Heartbeat (%s)", o.Heartbeat)
	case o.Batch < 0 || o.Batch > o.Horizon:
		return cluster.Invalid("Batch", o.Batch, "is outside 0..Horizon (%s)", o.Horizon)
	case o.MaxLate < time.Millisecond || o.MaxLate > time.Second:
		return cluster.Invalid("MaxLate", o.MaxLate, "is outside 1ms..1s")
	case o.StateTTL < time.Second || o.StateTTL > 30*24*time.Hour:
		return cluster.Invalid("StateTTL", o.StateTTL, "is outside 1s..720h")
	case o.CutEvery < 0 || o.CutEvery > time.Hour:
		return cluster.Invalid("CutEvery", o.CutEvery, "is outside 0..1h")
	case o.Window < time.Millisecond || o.Window > time.Hour:
		return cluster.Invalid("Window", o.Window, "is outside 1ms..1h")
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
	case r.Burst < 0 || r.Burst > 100000:
		return cluster.Invalid("Burst", r.Burst, "is outside 0..100000")
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

// minLate is the least lateness a booking allows, whatever the rule: a
// process's timers cannot keep closer than that. A rule whose burst is
// worth less than this at its rate (a burst of 10 at 100,000 requests a
// second) is kept as closely as they allow.
const minLate = time.Millisecond

// booking is how late after its booked time a request may go, and the
// burst the host is booked with, so that requests that late, on clocks
// that may differ by clockErr, never let more through than the rule's
// burst in any span. A burst of 1 may be a quarter of an interval late
// (at most maxLate) and keeps its exact spacing, as long as the lateness
// and the clocks' error stay below the interval. A bigger burst may be a
// quarter of what the burst is worth late (at most maxLate), and is
// booked less what that lateness is worth at the rate, at least 1.
func (l limits) booking(maxLate, clockErr time.Duration) (late time.Duration, burst int) {
	if math.IsInf(l.intervalMS, 0) || l.intervalMS <= 0 {
		return maxLate, l.burst
	}
	interval := time.Duration(l.intervalMS * float64(time.Millisecond))
	late = max(min(time.Duration(max(l.burst-1, 1))*interval/4, maxLate), minLate)
	if l.burst == 1 {
		return late, 1
	}
	worth := int(math.Ceil(float64(late+2*clockErr) / float64(interval)))
	return late, max(l.burst-worth, 1)
}
