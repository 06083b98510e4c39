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
	// ProxyWait is how long a request that must go through a proxy waits
	// when none is free before it asks again.
	ProxyWait time.Duration
	// MaxProxyFaults is how many proxies may fail one page (refused, 407,
	// garbage) before the page itself fails; these attempts are not
	// charged to the page's retries.
	MaxProxyFaults int
	// HostRPS is the rate per host of a job with per_host_rps 0 and no
	// Crawl-delay. Every process of a cluster must use the same value.
	HostRPS float64
}

// DefaultHostRPS is the rate per host of a job that sets none and whose
// site asks for no Crawl-delay: polite, and with 8 requests in flight
// enough for a site that answers in a second.
const DefaultHostRPS = 5

// DefaultOptions returns the defaults: 32 workers, retries from 500ms to
// 30s, a proxy wait of 1s, 5 proxy faults per page, 5 requests/s per host.
func DefaultOptions() Options {
	return Options{Workers: 32, RetryBase: 500 * time.Millisecond, RetryMax: 30 * time.Second,
		ProxyWait: time.Second, MaxProxyFaults: 5, HostRPS: DefaultHostRPS}
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
	case o.MaxProxyFaults < 0 || o.MaxProxyFaults > 100:
		return cluster.Invalid("MaxProxyFaults", o.MaxProxyFaults, "is outside 0..100")
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
	// Metrics records each request; nil records nothing.
	Metrics *metrics.Node
	// Logger is nil for no logging.
	Logger *zap.Logger
}

// reportEvery is how long the end of a request waits to be told to its
// host's budget with others.
const reportEvery = 10 * time.Millisecond

// Downloader sends one process's requests: see the package comment.
type Downloader struct {
	opts    Options
	deps    Deps
	log     *zap.Logger
	budget  *politeness.Budget
	queue   *politeness.Queue[*Request]
	reports *politeness.Reporter // requests' ends, told to their hosts' budgets in batches
	pool    *proxy.Pool
	proxies proxyCount // how many proxies the pool holds, read now and then

	mu      sync.Mutex
	waiting map[*Request]struct{} // submitted and not yet in a worker
	timers  map[*Request]*time.Timer
	stopped bool
	pending atomic.Int64  // submitted and not yet finished
	gate    chan struct{} // bounds the robots.txt checks running at once
	wg      sync.WaitGroup
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
	popts.Keys, popts.DefaultRPS = deps.Keys, opts.HostRPS
	budget, err := politeness.New(deps.Redis, popts)
	if err != nil {
		return nil, fmt.Errorf("downloader: %w", err)
	}
	pool, err := proxy.NewPool(deps.Redis, deps.Keys, proxy.DefaultPoolOptions())
	if err != nil {
		return nil, fmt.Errorf("downloader: %w", err)
	}
	return &Downloader{opts: opts, deps: deps, log: log.Named("downloader"), budget: budget,
		queue: politeness.NewQueue[*Request](budget, log), pool: pool,
		reports: budget.NewReporter(reportEvery, 4*opts.Workers, log),
		waiting: map[*Request]struct{}{}, timers: map[*Request]*time.Timer{},
		gate: make(chan struct{}, max(opts.Workers, 16))}, nil
}

// Pending is how many submitted requests have not finished yet.
func (d *Downloader) Pending() int { return int(d.pending.Load()) }

// Submit hands r to the Downloader; it never blocks. r.Done is called once
// it is finished, fetched or not.
func (d *Downloader) Submit(r *Request) {
	d.pending.Add(1)
	if r.Ctx != nil { // a request given up ends at once, wherever it waits
		r.unwatch = context.AfterFunc(r.Ctx, func() { d.finish(context.Background(), r, Result{Kind: Cancelled}) })
	}
	d.spawn(r, true)
}

// spawn admits r on a goroutine of its own, tracked so that Run waits for
// it; once the Downloader stopped, r is cancelled instead.
func (d *Downloader) spawn(r *Request, track bool) {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		d.finish(context.Background(), r, Result{Kind: Cancelled})
		return
	}
	if track {
		d.waiting[r] = struct{}{}
	}
	d.wg.Add(1)
	d.mu.Unlock()
	go func() {
		defer d.wg.Done()
		d.admit(r)
	}()
}

// Run sends requests until ctx ends. Then it waits for the requests in
// flight, cancels the ones still waiting (their Done gets Cancelled) and
// returns nil.
func (d *Downloader) Run(ctx context.Context) error {
	var workers sync.WaitGroup
	qctx, stopQueue := context.WithCancel(context.WithoutCancel(ctx))
	queueDone := make(chan struct{})
	go func() { defer close(queueDone); _ = d.queue.Run(qctx) }()
	reportsDone := make(chan struct{})
	go func() { defer close(reportsDone); _ = d.reports.Run(qctx) }()
	for i := 0; i < d.opts.Workers; i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			d.work(ctx)
		}()
	}
	<-ctx.Done()
	workers.Wait()
	stopQueue()
	<-queueDone
	<-reportsDone // the last reports flushed
	d.stop()
	d.wg.Wait()
	return nil
}

// work takes requests whose host let them go until ctx ends.
func (d *Downloader) work(ctx context.Context) {
	for {
		ready, err := d.queue.Next(ctx)
		if err != nil {
			return
		}
		r := ready.Item
		d.untrack(r)
		d.attempt(context.WithoutCancel(ctx), r, ready.Lease)
	}
}

func (d *Downloader) untrack(r *Request) {
	d.mu.Lock()
	delete(d.waiting, r)
	d.mu.Unlock()
}

// stop cancels every request still waiting: in the host queue, for its
// backoff or for its robots.txt.
func (d *Downloader) stop() {
	d.mu.Lock()
	d.stopped = true
	left := make([]*Request, 0, len(d.waiting))
	for r := range d.waiting {
		left = append(left, r)
	}
	for _, t := range d.timers {
		t.Stop()
	}
	d.waiting, d.timers = map[*Request]struct{}{}, map[*Request]*time.Timer{}
	d.mu.Unlock()
	for _, r := range left {
		d.finish(context.Background(), r, Result{Kind: Cancelled})
	}
}

// later puts r back to wait for after d: its backoff, a Retry-After, a
// proxy to be free, robots.txt to be had.
func (d *Downloader) later(r *Request, wait time.Duration) {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		d.finish(context.Background(), r, Result{Kind: Cancelled})
		return
	}
	d.waiting[r] = struct{}{}
	d.timers[r] = time.AfterFunc(wait, func() {
		d.mu.Lock()
		_, live := d.timers[r]
		delete(d.timers, r)
		d.mu.Unlock()
		if live {
			d.spawn(r, false)
		}
	})
	d.mu.Unlock()
}

// finish ends r, once.
func (d *Downloader) finish(ctx context.Context, r *Request, res Result) {
	d.untrack(r)
	if r.finish(ctx, res) {
		d.pending.Add(-1)
	} else {
		res.Page.Release() // the request ended otherwise meanwhile: nobody takes the page
	}
}
