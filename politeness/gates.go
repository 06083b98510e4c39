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
// it holds a share of the host's cluster-wide concurrency cap and the
// times it booked, on Redis's clock, to send requests at; it lets each
// request through locally, at a booked time, on a slot it holds: Enter
// gives a Pass at once when both are there, and waits on a channel when
// not. A request costs Redis nothing; Run settles what the process needs
// from every host in rounds of one round trip each (see lua/round.lua),
// and a heartbeat renews its hold on all its slots at once.
//
// Shares are fair: each process tells the host's budget how many slots it
// could use, and the cap is split by water-filling, so a master that
// needs one slot for its list pages gets it whole, and the slaves split
// the rest evenly. A process holding more than its share gives back what
// it does not use, and the rest as its requests end; one whose requests
// ended gives its slots back once Options.Linger has passed. Bookings
// are first come, first served: every ask gets one time, however far the
// host is booked, and more only within Options.Horizon, so no process
// books a host for long. The slots of a process that dies free after
// Options.LeaseTTL.
type Gates struct {
	budget *Budget
	holder string
	log    *zap.Logger
	now    func() time.Time

	mu     sync.Mutex
	hosts  map[string]*gate
	shards []*shardState
	kick   chan struct{}
}

// NewGates returns the Gates of one process on b; Run keeps them in sync.
// A nil log logs nothing.
func (b *Budget) NewGates(log *zap.Logger) *Gates {
	if log == nil {
		log = zap.NewNop()
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	g := &Gates{budget: b, holder: hex.EncodeToString(id[:]), log: log.Named("politeness"),
		now: time.Now, hosts: map[string]*gate{}, kick: make(chan struct{}, 1)}
	for range b.shards {
		g.shards = append(g.shards, newShardState(g.now()))
	}
	return g
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
	// booked time), on this process's clock, before the waiting
	// goroutine is woken; sendBy is the latest the request may go.
	granted, sendBy time.Time
}

// Expired reports whether the pass's turn has passed: its request was not
// sent by its booked time and the lateness allowed (a busy machine woke
// its goroutine late). Sent now, it could come too close to the next
// request another process sends to the host: release the pass and enter
// again.
func (p *Pass) Expired() bool { return p.gates.now().After(p.sendBy) }

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
	reason := gt.blocked(now, g.valid(gt, now))
	if reason == ReasonNone && len(gt.waiters) == 0 {
		sendBy := gt.take()
		g.notePeak(gt, now)
		g.mu.Unlock()
		return &Pass{gates: g, gate: gt, granted: now, sendBy: sendBy}, nil
	}
	w := &waiter{ch: make(chan *Pass, 1), since: now, reason: reason}
	gt.waiters = append(gt.waiters, w)
	g.notePeak(gt, now)
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
		gt = newGate(host, ShardOf(host, len(g.shards)), now)
		g.hosts[host] = gt
	}
	gt.setRule(rule, g.budget.opts)
	return gt
}

// valid reports whether gt's slots may be used at now: the process's
// hold on its shard was renewed recently enough.
func (g *Gates) valid(gt *gate, now time.Time) bool {
	return now.Before(g.shards[gt.shard].validUntil)
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
	if status != 0 {
		gt.noteHold(now.Sub(p.granted))
	}
	gt.fb.add(status, g.budget.pauseMS(retryAfter))
	if status == http.StatusTooManyRequests && retryAfter > 0 {
		gt.paused = later(gt.paused, now.Add(min(retryAfter, g.budget.opts.MaxPause)))
		gt.booked.clear()
	}
	g.dispatch(gt, now)
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

// merge puts back feedback a failed round did not deliver.
func (f *feedback) merge(o feedback) {
	f.ok += o.ok
	f.throttled += o.throttled
	f.pauseMS = max(f.pauseMS, o.pauseMS)
	f.retryAfterMS = max(f.retryAfterMS, o.retryAfterMS)
	f.urgent = f.urgent || o.urgent
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

// dispatch hands passes to gt's waiters, oldest first, while slots and
// booked times last, and sets its timer for the next booked time.
func (g *Gates) dispatch(gt *gate, now time.Time) {
	valid := g.valid(gt, now)
	for len(gt.waiters) > 0 && gt.blocked(now, valid) == ReasonNone {
		w := gt.waiters[0]
		gt.waiters[0] = nil
		gt.waiters = gt.waiters[1:]
		sendBy := gt.take()
		w.ch <- &Pass{gates: g, gate: gt, Waited: now.Sub(w.since), Reason: w.reason, granted: now, sendBy: sendBy}
	}
	if len(gt.waiters) > 0 && gt.usable(valid) <= 0 && gt.booked.ready(now, gt.late) {
		gt.starvedAt = now // the slots, not the rate, hold it back
	}
	if len(gt.waiters) > 0 && gt.usable(valid) > 0 && !now.Before(gt.paused) && gt.booked.len() == 0 {
		gt.ranDryAt = now // the booked times, not the slots, hold it back: book more
	}
	g.armTimer(gt, now)
}

// armTimer wakes gt at its next booked time while requests wait for one.
func (g *Gates) armTimer(gt *gate, now time.Time) {
	next, ok := gt.booked.next()
	if !ok || len(gt.waiters) == 0 || !next.After(now) {
		return
	}
	d := next.Sub(now)
	if gt.timer == nil {
		gt.timer = time.AfterFunc(d, func() { g.wake(gt) })
		return
	}
	gt.timer.Reset(d)
}

// wake lets gt's waiters through at a booked time.
func (g *Gates) wake(gt *gate) {
	g.mu.Lock()
	now := g.now()
	g.dispatch(gt, now)
	due := g.isDue(gt, now)
	g.mu.Unlock()
	if due {
		g.signal()
	}
}

func (g *Gates) signal() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// Parked is how many requests waiting at the gates are not expected to
// pass within horizon: those of a host paused that long, and those beyond
// what their host passed in that long lately. A caller that bounds the
// requests it holds counts these apart, so that one slow or paused host
// does not crowd out the others.
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
