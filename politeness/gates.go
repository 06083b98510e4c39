package politeness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Gates is one process's way to the hosts it sends requests to. Per host
// it holds a share of the host's cluster-wide concurrency cap (slots,
// under a lease it renews) and a stock of rate tokens, both taken from
// the host's Budget in Redis, and lets its requests through locally:
// Enter gives a Pass at once when a slot and a token are free, and waits
// on a channel when not. A request costs Redis nothing; Run syncs each
// host now and then (a heartbeat renews the slots and carries the
// answers' feedback) and when the process needs more, in one round trip
// for every host due.
//
// Shares are fair: each process tells the host's budget how many slots it
// could use, and the cap is split by water-filling, so a master that
// needs one slot for its list pages gets it whole, and the slaves split
// the rest evenly. A process holding more than its share gives back what
// it does not use at once, and the rest as its requests end; one whose
// requests ended gives its slots back once Options.Linger has passed (a
// master whose walk is over), and one with requests waiting that holds
// less than it could use asks again every Options.Contended, so it takes
// them up; one that joins gets its share within a few Options.Contended.
// The slots of a process that dies free after Options.LeaseTTL.
type Gates struct {
	budget *Budget
	holder string
	log    *zap.Logger
	now    func() time.Time

	mu    sync.Mutex
	hosts map[string]*gate
	kick  chan struct{}
}

// NewGates returns the Gates of one process on b; Run keeps them in sync.
// A nil log logs nothing.
func (b *Budget) NewGates(log *zap.Logger) *Gates {
	if log == nil {
		log = zap.NewNop()
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &Gates{budget: b, holder: hex.EncodeToString(id[:]), log: log.Named("politeness"),
		now: time.Now, hosts: map[string]*gate{}, kick: make(chan struct{}, 1)}
}

// Pass lets one request go to its host. Give it back with Done once the
// request ended, or Release if it was never sent.
type Pass struct {
	gates *Gates
	gate  *gate
	done  atomic.Bool
	// Waited is how long Enter waited for the pass, and Reason what held
	// it back first (ReasonNone if it went at once).
	Waited time.Duration
	Reason Reason
	// granted is when the gate let the request go (took its slot and
	// token), on this process's clock: the time the rate is kept at,
	// before the waiting goroutine is woken.
	granted time.Time
}

// Host is the host the pass is for.
func (p *Pass) Host() string { return p.gate.host }

// Enter waits until host lets one more request go under rule, and returns
// its pass. It fails only when ctx ends or the rule or host is bad; the
// last rule given for a host is the one used.
func (g *Gates) Enter(ctx context.Context, host string, rule Rule) (*Pass, error) {
	host = normalize(host)
	if host == "" {
		return nil, fmt.Errorf("enter: %w", ErrNoHost)
	}
	if err := rule.Validate(); err != nil {
		return nil, fmt.Errorf("enter %s: %w", host, err)
	}
	g.mu.Lock()
	now := g.now()
	gt := g.gateFor(host, rule, now)
	reason := gt.blocked(now)
	if reason == ReasonNone && len(gt.waiters) == 0 {
		gt.take(now)
		gt.notePeak(now)
		g.mu.Unlock()
		return &Pass{gates: g, gate: gt, granted: now}, nil
	}
	w := &waiter{ch: make(chan *Pass, 1), since: now, reason: reason}
	gt.waiters = append(gt.waiters, w)
	gt.notePeak(now)
	g.mu.Unlock()
	g.signal()
	select {
	case p := <-w.ch:
		return p, nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	removed := gt.remove(w)
	g.mu.Unlock()
	if !removed { // a pass was handed over as we gave up
		(<-w.ch).Release()
	}
	return nil, ctx.Err()
}

func (g *Gates) gateFor(host string, rule Rule, now time.Time) *gate {
	gt := g.hosts[host]
	if gt == nil {
		gt = newGate(host, now)
		g.hosts[host] = gt
	}
	gt.setRule(rule, g.budget.opts)
	return gt
}

// Done gives the pass back after its request ended with status (0: no
// answer) and, for a 429 or 503, the Retry-After it asked for. A 429 with
// Retry-After pauses the host for the whole cluster; 429s and 503s that
// are a real share of the host's answers cut its rate (see Options.CutShare);
// good answers raise it back. It never blocks.
func (p *Pass) Done(status int, retryAfter time.Duration) {
	if !p.done.CompareAndSwap(false, true) {
		return
	}
	g, gt := p.gates, p.gate
	g.mu.Lock()
	now := g.now()
	gt.busy--
	gt.fb.add(status, g.budget.pauseMS(retryAfter))
	if status == http.StatusTooManyRequests && retryAfter > 0 {
		gt.paused = later(gt.paused, now.Add(min(retryAfter, g.budget.opts.MaxPause)))
	}
	gt.dispatch(g, now)
	// The waiters left need tokens or slots, or a pause must be told; or
	// the gate went idle, and Run must wake when its demand lingers out
	// to give its slots back.
	wake := g.isDue(gt, now) || (gt.demand() == 0 && gt.held > 0)
	g.mu.Unlock()
	if wake {
		g.signal()
	}
}

// Release gives the pass back unused: the request was never sent.
func (p *Pass) Release() { p.Done(0, 0) }

func (f *feedback) add(status int, pauseMS int64) {
	switch {
	case status == http.StatusTooManyRequests:
		f.throttled++
		f.pauseMS = max(f.pauseMS, pauseMS)
		f.urgent = f.urgent || pauseMS > 0
	case status == http.StatusServiceUnavailable:
		f.throttled++
		f.retryAfterMS = max(f.retryAfterMS, pauseMS)
	case status >= 200 && status < 500:
		f.ok++
	}
}

func (b *Budget) pauseMS(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return max(min(d, b.opts.MaxPause).Milliseconds(), 1)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (g *Gates) signal() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// Parked is how many requests waiting at the gates are not expected to
// pass within horizon: those of a paused host or one whose rate makes
// them wait that long, and those beyond what their host passed in that
// long lately. A caller that bounds the requests it holds counts these
// apart, so that one slow or paused host does not crowd out the others.
func (g *Gates) Parked(horizon time.Duration) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	now, n := g.now(), 0
	for _, gt := range g.hosts {
		n += gt.parked(now, horizon)
	}
	return n
}

// Waiting is how many requests wait at the gates.
func (g *Gates) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, gt := range g.hosts {
		n += len(gt.waiters)
	}
	return n
}
