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
	// LeaseTTL is how long a process's slots of a host's cap stay its own
	// without a sync: the slots of a process that dies, or cannot reach
	// Redis, free after it. A process that cannot renew its slots in time
	// starts no request on them.
	LeaseTTL time.Duration
	// Heartbeat is how often a process renews the slots it holds, and
	// tells the host's budget how its requests went.
	Heartbeat time.Duration
	// Contended is how often it syncs instead while some process holds
	// less than its fair share of a host's cap (one joined, or its demand
	// grew), so that slots move to it within a few of these.
	Contended time.Duration
	// Linger is how long a process keeps slots it no longer uses: a master
	// between two levels of list pages, or a slave between two takes,
	// keeps its share instead of asking for it again. Short, because a
	// slave whose queue ran dry holds slots that a slave still working
	// needs: on one site with slow pages, slots kept 2s unused left a
	// quarter of the host's cap idle at the end of each crawl.
	Linger time.Duration
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
	// MaxStock caps the rate tokens a process takes in one sync.
	MaxStock int
	// StockLife is the longest a process keeps rate tokens before it sends
	// requests on them (at most the time half the host's burst takes at
	// its rate); tokens it did not use by then are dropped. The burst the
	// budget grants with is cut by what that life is worth at the host's
	// rate, so that tokens used late never add up to more than the rule
	// allows in any span of time. A host with a Burst of 1 or 2 gets
	// tokens only for requests that go at once.
	StockLife time.Duration
	// MaxPause caps a pause a site asks for with Retry-After.
	MaxPause time.Duration
}

// DefaultOptions returns the defaults: DefaultRPS 1, LeaseTTL 5s,
// Heartbeat 1s, Contended 100ms, Linger 500ms, StateTTL 1h, Cut 0.5,
// CutEvery 1s, Window 2s, CutThrottled 3, CutShare 0.2, Raise 0.02 (from
// half rate back to full in 25 good answers), MinFactor 1/64, MaxStock
// 1024, StockLife 50ms, MaxPause 1h.
func DefaultOptions() Options {
	return Options{
		DefaultRPS:   1,
		LeaseTTL:     5 * time.Second,
		Heartbeat:    time.Second,
		Contended:    100 * time.Millisecond,
		Linger:       500 * time.Millisecond,
		StateTTL:     time.Hour,
		Cut:          0.5,
		CutEvery:     time.Second,
		Window:       2 * time.Second,
		CutThrottled: 3,
		CutShare:     0.2,
		Raise:        0.02,
		MinFactor:    1.0 / 64,
		MaxStock:     1024,
		StockLife:    50 * time.Millisecond,
		MaxPause:     time.Hour,
	}
}

// Validate reports the first option out of range as a *cluster.FieldError.
func (o Options) Validate() error {
	switch {
	case !(o.DefaultRPS > 0 && o.DefaultRPS <= MaxRPS):
		return cluster.Invalid("DefaultRPS", o.DefaultRPS, "is outside (0, %g]", float64(MaxRPS))
	case o.LeaseTTL < 10*time.Millisecond || o.LeaseTTL > time.Hour:
		return cluster.Invalid("LeaseTTL", o.LeaseTTL, "is outside 10ms..1h")
	case o.Heartbeat < time.Millisecond || o.Heartbeat > o.LeaseTTL/2:
		return cluster.Invalid("Heartbeat", o.Heartbeat, "is outside 1ms..LeaseTTL/2 (%s)", o.LeaseTTL/2)
	case o.Contended < time.Millisecond || o.Contended > o.Heartbeat:
		return cluster.Invalid("Contended", o.Contended, "is outside 1ms..Heartbeat (%s)", o.Heartbeat)
	case o.Linger < 0 || o.Linger > time.Hour:
		return cluster.Invalid("Linger", o.Linger, "is outside 0..1h")
	case o.StateTTL < time.Second || o.StateTTL > 30*24*time.Hour:
		return cluster.Invalid("StateTTL", o.StateTTL, "is outside 1s..720h")
	case !(o.Cut > 0 && o.Cut <= 1):
		return cluster.Invalid("Cut", o.Cut, "is outside (0, 1]")
	case o.CutEvery < 0 || o.CutEvery > time.Hour:
		return cluster.Invalid("CutEvery", o.CutEvery, "is outside 0..1h")
	case o.Window < time.Millisecond || o.Window > time.Hour:
		return cluster.Invalid("Window", o.Window, "is outside 1ms..1h")
	case o.CutThrottled < 1 || o.CutThrottled > 1000:
		return cluster.Invalid("CutThrottled", o.CutThrottled, "is outside 1..1000")
	case !(o.CutShare >= 0 && o.CutShare <= 1):
		return cluster.Invalid("CutShare", o.CutShare, "is outside 0..1")
	case !(o.Raise >= 0 && o.Raise <= 1):
		return cluster.Invalid("Raise", o.Raise, "is outside 0..1")
	case !(o.MinFactor > 0 && o.MinFactor <= 1):
		return cluster.Invalid("MinFactor", o.MinFactor, "is outside (0, 1]")
	case o.MaxStock < 1 || o.MaxStock > 100000:
		return cluster.Invalid("MaxStock", o.MaxStock, "is outside 1..100000")
	case o.StockLife < 0 || o.StockLife > time.Second:
		return cluster.Invalid("StockLife", o.StockLife, "is outside 0..1s")
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

// stock is how long rate tokens may be kept before use (at most maxLife,
// and the time half the burst's tokens take at the rate), and the burst
// the GCRA grants with so that tokens kept that long never let more
// through than the rule's burst: the burst less the tokens the rate adds
// up to in that life.
func (l limits) stock(maxLife time.Duration) (life time.Duration, burst int) {
	k := (l.burst - 1) / 2 // whole tokens the life may be worth
	if k == 0 || math.IsInf(l.intervalMS, 0) || l.intervalMS <= 0 {
		return 0, l.burst
	}
	maxMS := float64(maxLife) / float64(time.Millisecond)
	if lifeMS := float64(k) * l.intervalMS; lifeMS <= maxMS {
		return time.Duration(lifeMS * float64(time.Millisecond)), l.burst - k
	}
	return maxLife, l.burst - int(math.Ceil(maxMS/l.intervalMS))
}
