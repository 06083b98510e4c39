package downloader

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/politeness"
	"github.com/crawler-dev/crawler/proxy"
	"github.com/crawler-dev/crawler/render"
	"github.com/crawler-dev/crawler/robots"
)

// Options configures a Downloader. Start from DefaultOptions.
type Options struct {
	// Workers is how many requests the process sends at once.
	Workers int
	// RetryBase is the first backoff before a transient failure is tried
	// again; each try doubles it, with jitter, up to RetryMax. A site's
	// Retry-After, when longer, wins.
	RetryBase time.Duration
	// RetryMax caps one backoff.
	RetryMax time.Duration
	// ProxyWait is how long the requests that must go through a proxy wait
	// when none is free for them before the pool is asked again; each
	// fruitless ask doubles it, up to MaxProxyWait.
	ProxyWait time.Duration
	// MaxProxyWait caps the wait between two asks for a proxy.
	MaxProxyWait time.Duration
	// ProxyBusyWait is how long they wait instead when a proxy could serve
	// them but is at its concurrency cap: a slot frees as soon as a request
	// through it ends, so this wait does not grow.
	ProxyBusyWait time.Duration
	// MaxProxyFaults is how many proxies may fail one page (refused, 407,
	// garbage) before the page itself fails; these attempts are not
	// charged to the page's retries.
	MaxProxyFaults int
	// MaxRobotsWait bounds how long a page waits for its robots.txt while
	// the site answers it with 5xx or 429 or cannot be reached (RFC 9309:
	// everything is disallowed meanwhile), or while another process fetches
	// it; past it the page fails, saying why. The wait is not charged to
	// the page's retries.
	MaxRobotsWait time.Duration
	// HostLeaseTTL is how long a request's place in its host's concurrency
	// cap lasts unless renewed: a request that runs longer has it renewed
	// while it runs, and the places of a process that dies free after it.
	HostLeaseTTL time.Duration
	// HostLinger is how long the process keeps a host's slots it no
	// longer uses before it gives them back to the others (see
	// politeness.Options.Linger). A master, whose list pages come in short
	// bursts, sets it short: the slaves have the slots back soon after its
	// walk ends.
	HostLinger time.Duration
	// HostRPS is the rate per host of a job with per_host_rps 0 and no
	// Crawl-delay. Every process of a cluster must use the same value.
	HostRPS float64
}

// DefaultHostRPS is the rate per host of a job that sets none and whose
// site asks for no Crawl-delay: polite, and with 8 requests in flight
// enough for a site that answers in a second.
const DefaultHostRPS = 5

// DefaultOptions returns the defaults: 32 workers; retries from 100ms to
// 30s (a URL's own retries only space its attempts: the host's budget,
// which slows a host that throttles, is what spares the site); proxy
// waits from 1s to 30s (50ms while proxies are only busy); 5 proxy faults
// per page; robots.txt waited for up to 1h; host leases of 2m; host slots
// kept 500ms unused; 5 requests/s per host.
func DefaultOptions() Options {
	return Options{Workers: 32, RetryBase: 100 * time.Millisecond, RetryMax: 30 * time.Second,
		ProxyWait: time.Second, MaxProxyWait: 30 * time.Second, ProxyBusyWait: 50 * time.Millisecond, MaxProxyFaults: 5,
		MaxRobotsWait: time.Hour, HostLeaseTTL: politeness.DefaultOptions().LeaseTTL,
		HostLinger: politeness.DefaultOptions().Linger, HostRPS: DefaultHostRPS}
}

// Validate reports the first option out of range as a *cluster.FieldError.
func (o Options) Validate() error {
	switch {
	case o.Workers < 1 || o.Workers > 100000:
		return cluster.Invalid("Workers", o.Workers, "is outside 1..100000")
	case o.RetryBase < time.Millisecond || o.RetryBase > o.RetryMax:
		return cluster.Invalid("RetryBase", o.RetryBase, "is outside 1ms..RetryMax (%s)", o.RetryMax)
	case o.RetryMax > time.Hour:
		return cluster.Invalid("RetryMax", o.RetryMax, "is over 1h")
	case o.ProxyWait < time.Millisecond || o.ProxyWait > time.Minute:
		return cluster.Invalid("ProxyWait", o.ProxyWait, "is outside 1ms..1m")
	case o.MaxProxyWait < o.ProxyWait || o.MaxProxyWait > 10*time.Minute:
		return cluster.Invalid("MaxProxyWait", o.MaxProxyWait, "is outside ProxyWait (%s)..10m", o.ProxyWait)
	case o.ProxyBusyWait < time.Millisecond || o.ProxyBusyWait > o.ProxyWait:
		return cluster.Invalid("ProxyBusyWait", o.ProxyBusyWait, "is outside 1ms..ProxyWait (%s)", o.ProxyWait)
	case o.MaxProxyFaults < 0 || o.MaxProxyFaults > 100:
		return cluster.Invalid("MaxProxyFaults", o.MaxProxyFaults, "is outside 0..100")
	case o.MaxRobotsWait < 10*time.Millisecond || o.MaxRobotsWait > 7*24*time.Hour:
		return cluster.Invalid("MaxRobotsWait", o.MaxRobotsWait, "is outside 10ms..168h")
	case o.HostLeaseTTL < 10*time.Millisecond || o.HostLeaseTTL > 24*time.Hour:
		return cluster.Invalid("HostLeaseTTL", o.HostLeaseTTL, "is outside 10ms..24h")
	case o.HostLinger < 0 || o.HostLinger > time.Hour:
		return cluster.Invalid("HostLinger", o.HostLinger, "is outside 0..1h")
	case !(o.HostRPS > 0 && o.HostRPS <= politeness.MaxRPS):
		return cluster.Invalid("HostRPS", o.HostRPS, "is outside (0, %d]", politeness.MaxRPS)
	}
	return nil
}

// Deps are what a Downloader sends requests with.
type Deps struct {
	// Redis holds the cluster's shared state: host budgets, robots.txt
	// files, the proxy pool.
	Redis redis.UniversalClient
	// Keys names the cluster's Redis keys.
	Keys cluster.Keys
	// Fetcher makes the requests.
	Fetcher *fetch.Fetcher
	// Renderer renders the pages of kinds that say render; nil fails them
	// (ErrNoRenderer).
	Renderer *render.Renderer
	// Metrics records each request; nil records nothing.
	Metrics *metrics.Node
	// Logger is nil for no logging.
	Logger *zap.Logger
}

// ParkHorizon is how far off a request's turn must be for it to count as
// parked (see Parked): waiting out a Retry-After or a backoff, for its
// robots.txt or a proxy, or at a host that is paused, spaces its requests
// wider, or has more waiting than it lets through in that long. A slave
// holds a few times its concurrency in requests due sooner, and takes no
// more: short, so that a slave crawling many polite hosts holds a request
// for each of them. At 5 requests/s per host, shared with the other
// processes, a slave's turn at a host comes every second or so; with 2s,
// the requests of a dozen hosts filled its hand, and 40 hosts crawled at
// 0.8 of the politeness bound, their other tasks idle in its queue.
const ParkHorizon = 500 * time.Millisecond

// Downloader sends one process's requests: see the package comment. Each
// request runs on its caller's goroutine, in Fetch, through the steps of
// fetchPage; waiting anywhere costs that goroutine, not a worker and not
// a poll.
type Downloader struct {
	opts   Options
	deps   Deps
	log    *zap.Logger
	gates  *politeness.Gates // this process's share of each host's budget
	pool   *proxy.Pool
	counts proxyCount  // how many proxies the pool holds, read now and then
	waits  *proxyWaits // requests waiting for a proxy, by target
	// robotsOpts are the options of the jobs' robots.txt caches; tests
	// shorten them.
	robotsOpts robots.Options

	workers chan struct{} // a slot per request sent at once (Options.Workers)
	// forWorker counts the requests that hold their host's turn and wait
	// for a worker.
	forWorker atomic.Int64
	gate      chan struct{} // bounds the robots.txt downloads running at once
	stop      context.Context
	halt      context.CancelFunc // ends every wait: the Downloader stops
	pending   atomic.Int64       // submitted and not yet finished
	parked    atomic.Int64       // in a wait of ParkHorizon or longer
	wg        sync.WaitGroup     // Fetch calls under way
	closing   sync.RWMutex       // guards closed against wg.Add after wg.Wait
	closed    bool               // Run stopped: Fetch cancels at once
}

// New returns a Downloader; Run sends its requests.
func New(opts Options, deps Deps) (*Downloader, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if deps.Redis == nil || deps.Fetcher == nil {
		return nil, errors.New("downloader: New needs Redis and a Fetcher")
	}
	log := deps.Logger
	if log == nil {
		log = zap.NewNop()
	}
	popts := politeness.DefaultOptions()
	popts.Keys, popts.DefaultRPS, popts.LeaseTTL, popts.Linger = deps.Keys, opts.HostRPS, opts.HostLeaseTTL, opts.HostLinger
	popts.Heartbeat = min(popts.Heartbeat, opts.HostLeaseTTL/5)
	popts.Contended = min(popts.Contended, popts.Heartbeat)
	budget, err := politeness.New(deps.Redis, popts)
	if err != nil {
		return nil, fmt.Errorf("downloader: %w", err)
	}
	pool, err := proxy.NewPool(deps.Redis, deps.Keys, proxy.DefaultPoolOptions())
	if err != nil {
		return nil, fmt.Errorf("downloader: %w", err)
	}
	stop, halt := context.WithCancel(context.Background())
	d := &Downloader{opts: opts, deps: deps, log: log.Named("downloader"), gates: budget.NewGates(log), pool: pool,
		robotsOpts: robots.DefaultOptions(), workers: make(chan struct{}, opts.Workers),
		gate: make(chan struct{}, max(opts.Workers, 16)), stop: stop, halt: halt}
	d.waits = newProxyWaits(d)
	return d, nil
}

// Pending is how many submitted requests have not finished yet.
func (d *Downloader) Pending() int { return int(d.pending.Load()) }

// Parked is how many of the Pending requests are not expected to start
// within ParkHorizon: waiting out a Retry-After or a backoff, for their
// robots.txt or a proxy, or at a host that is paused, spaces its requests
// wider, or has more waiting than it lets through in that long. A caller
// bounding the requests it holds counts these apart, so that one slow or
// paused host does not crowd out the others.
func (d *Downloader) Parked() int {
	n := int(d.parked.Load()) + d.gates.Parked(ParkHorizon) + d.waits.len()
	return min(n, d.Pending())
}

// Fetch downloads r and says what became of it, fetched or not: it
// returns once r is done, so a caller fetching many pages at once calls
// it from goroutines of its own (waiting anywhere costs such a goroutine,
// not a worker). It is Cancelled when ctx or r.Abandon ends or the
// Downloader stops before the request was sent; a request on the wire is
// cut short by ctx alone. A Request is fetched once.
func (d *Downloader) Fetch(ctx context.Context, r *Request) Result {
	if !d.enter() {
		return Result{Kind: Cancelled}
	}
	d.pending.Add(1)
	defer d.wg.Done()
	defer d.pending.Add(-1)
	r.ctx = ctx
	wctx, cancel := d.waitContext(r)
	res := d.fetchPage(wctx, r)
	cancel()
	res.Tries = r.tries
	return res
}

// enter counts a request in, for Run to wait for; false once Run stopped
// the Downloader.
func (d *Downloader) enter() bool {
	d.closing.RLock()
	defer d.closing.RUnlock()
	if d.closed {
		return false
	}
	d.wg.Add(1)
	return true
}

// waitContext is the context r waits under: it ends when the caller's
// context or r.Abandon ends or the Downloader stops. A request already
// sent is not cut short by the stop or the abandon (see send).
func (d *Downloader) waitContext(r *Request) (context.Context, context.CancelFunc) {
	parent := r.ctx
	if parent == nil {
		parent = d.stop
	}
	ctx, cancel := context.WithCancel(parent)
	stops := []func() bool{context.AfterFunc(d.stop, cancel)}
	if r.Abandon != nil {
		stops = append(stops, context.AfterFunc(r.Abandon, cancel))
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// Run sends requests until ctx ends. Then it lets the requests in flight
// finish, cancels the ones still waiting (their Done gets Cancelled), gives
// back the host slots it holds and returns nil.
func (d *Downloader) Run(ctx context.Context) error {
	gctx, stopGates := context.WithCancel(context.WithoutCancel(ctx))
	gatesDone := make(chan struct{})
	go func() { defer close(gatesDone); _ = d.gates.Run(gctx) }()
	<-ctx.Done()
	d.halt()
	d.closing.Lock()
	d.closed = true
	d.closing.Unlock()
	d.wg.Wait()
	stopGates()
	<-gatesDone
	return nil
}
