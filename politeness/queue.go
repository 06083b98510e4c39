package politeness

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/crawler-dev/crawler/internal/ctxtime"
	"go.uber.org/zap"
)

// Ready is a queued item whose host's budget let it go: send its request
// now, then Done (or Release) its Lease.
type Ready[T any] struct {
	Item  T
	Lease *Lease
	rule  Rule
}

// Queue holds one process's requests that wait for their host's budget and
// hands each to an idle worker together with its lease. One loop (Run)
// asks Redis once per round for every host whose wait has passed, for as
// many leases as there are idle workers (AcquireMany: one round trip), so
// 30 tasks across 5 hosts cost one round trip, not 30; a worker never
// waits on a busy host while another host has work; and a lease is taken
// only for a worker ready to use it.
type Queue[T any] struct {
	budget *Budget
	log    *zap.Logger

	mu      sync.Mutex
	hosts   map[string]*hostQueue[T]
	order   []string        // hosts in the order they are asked
	waiters []chan Ready[T] // idle workers (Next), oldest first
	wake    chan struct{}   // something changed: plan again
	now     func() time.Time
}

type hostQueue[T any] struct {
	rule   Rule
	items  []T
	due    time.Time // not asked again before
	reason Reason    // what held the host back when last asked
}

// maxIdle bounds the loop's sleep with nothing due, so it notices a pause
// or a backoff ending even if nobody pushes.
const maxIdle = time.Second

// NewQueue returns a Queue drawing on budget. A nil log logs nothing.
func NewQueue[T any](budget *Budget, log *zap.Logger) *Queue[T] {
	if log == nil {
		log = zap.NewNop()
	}
	return &Queue[T]{budget: budget, log: log.Named("politeness"), hosts: map[string]*hostQueue[T]{},
		wake: make(chan struct{}, 1), now: time.Now}
}

// Push queues item for host under rule; the last rule pushed for a host is
// the one used. It never blocks.
func (q *Queue[T]) Push(host string, rule Rule, item T) {
	host = normalize(host)
	q.mu.Lock()
	h, ok := q.hosts[host]
	if !ok {
		h = &hostQueue[T]{}
		q.hosts[host] = h
		q.order = append(q.order, host)
	}
	h.rule = rule
	h.items = append(h.items, item)
	q.mu.Unlock()
	q.signal()
}

// Remove takes out of host's queue the items match selects, in their
// order, and returns them: they no longer wait for the host.
func (q *Queue[T]) Remove(host string, match func(T) bool) []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	h := q.hosts[normalize(host)]
	if h == nil {
		return nil
	}
	var out []T
	kept := h.items[:0]
	for _, it := range h.items {
		if match(it) {
			out = append(out, it)
		} else {
			kept = append(kept, it)
		}
	}
	clear(h.items[len(kept):]) // drop the references the slice still holds
	h.items = kept
	return out
}

// Len is the number of items waiting for their host.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, h := range q.hosts {
		n += len(h.items)
	}
	return n
}

// Parked is how many queued items are not expected to start within
// horizon: every item of a host that may not be asked again for that long
// (paused by a Retry-After, or spacing its requests wider, as a long
// Crawl-delay does), and the items beyond its concurrency cap of a host
// the budget held back when last asked. A caller that bounds the work it
// holds counts these apart, so that one slow or paused host does not
// crowd out the others.
func (q *Queue[T]) Parked(horizon time.Duration) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	now, n := q.now(), 0
	for _, h := range q.hosts {
		switch {
		case h.due.Sub(now) >= horizon:
			n += len(h.items)
		case h.reason != ReasonNone:
			n += max(len(h.items)-h.rule.limits(q.budget.opts.DefaultRPS).cap, 0)
		}
	}
	return n
}

// Next blocks until an item's host lets it go, and returns it with its
// lease. An item handed out as ctx ends goes back to the queue.
func (q *Queue[T]) Next(ctx context.Context) (Ready[T], error) {
	ch := make(chan Ready[T], 1)
	q.mu.Lock()
	q.waiters = append(q.waiters, ch)
	q.mu.Unlock()
	q.signal()
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	i := slices.Index(q.waiters, ch)
	if i >= 0 {
		q.waiters = slices.Delete(q.waiters, i, i+1)
	}
	q.mu.Unlock()
	if i < 0 { // an item was handed over as we gave up: put it back
		q.putBack(<-ch)
	}
	return Ready[T]{}, ctx.Err()
}

func (q *Queue[T]) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Run asks the budget for the queued hosts until ctx ends; it returns nil
// then. A Redis failure is logged and retried after a second.
func (q *Queue[T]) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		wants := q.plan()
		if len(wants) > 0 {
			grants, err := q.budget.AcquireMany(ctx, wants)
			if err != nil {
				if ctx.Err() == nil {
					q.log.Warn("acquire host budgets", zap.Error(err))
					_ = ctxtime.Sleep(ctx, time.Second)
				}
				continue
			}
			q.deliver(ctx, grants)
		}
		q.idle(ctx)
	}
	return nil
}

// plan picks the hosts to ask: due, with items, for no more leases in all
// than there are idle workers, shared out one at a time across hosts.
func (q *Queue[T]) plan() []Want {
	q.mu.Lock()
	defer q.mu.Unlock()
	left := len(q.waiters)
	now := q.now()
	var wants []Want
	for _, host := range q.order {
		if h := q.hosts[host]; len(h.items) > 0 && !now.Before(h.due) && len(wants) < left {
			wants = append(wants, Want{Host: host, Rule: h.rule, N: 1})
		}
	}
	left -= len(wants)
	for more := true; more && left > 0; {
		more = false
		for i := range wants {
			if h := q.hosts[wants[i].Host]; left > 0 && wants[i].N < min(len(h.items), q.budget.opts.MaxWant) {
				wants[i].N++
				left--
				more = true
			}
		}
	}
	q.rotate(len(wants))
	return wants
}

// rotate moves the first n hosts to the back so the next round starts
// with others.
func (q *Queue[T]) rotate(n int) {
	if n == 0 || n >= len(q.order) {
		return
	}
	q.order = append(q.order[n:], q.order[:n]...)
}

// deliver hands granted items to waiting workers and sets when each host
// may be asked again.
func (q *Queue[T]) deliver(ctx context.Context, grants []Grant) {
	var spare []*Lease
	q.mu.Lock()
	now := q.now()
	for _, g := range grants {
		h := q.hosts[g.Host]
		h.due, h.reason = now.Add(g.Wait), g.Reason
		for _, l := range g.Leases {
			if len(h.items) == 0 || len(q.waiters) == 0 {
				spare = append(spare, l)
				continue
			}
			item := h.items[0]
			h.items = h.items[1:]
			w := q.waiters[0]
			q.waiters = q.waiters[1:]
			w <- Ready[T]{Item: item, Lease: l, rule: h.rule}
		}
		if len(h.items) == 0 {
			q.forget(g.Host)
		}
	}
	q.mu.Unlock()
	for _, l := range spare { // the workers left meanwhile
		if err := l.Release(ctx); err != nil {
			q.log.Debug("release spare lease", zap.String("host", l.host), zap.Error(err))
		}
	}
}

// forget drops an empty host's queue, unless it must keep its due time.
func (q *Queue[T]) forget(host string) {
	if q.now().Before(q.hosts[host].due) {
		return
	}
	delete(q.hosts, host)
	q.order = slices.DeleteFunc(q.order, func(h string) bool { return h == host })
}

// idle sleeps until the next host is due, something is pushed or a worker
// comes idle.
func (q *Queue[T]) idle(ctx context.Context) {
	d := q.untilDue()
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-q.wake:
	case <-t.C:
	}
}

// untilDue is how long until a host with items is due, if a worker waits.
func (q *Queue[T]) untilDue() time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiters) == 0 {
		return maxIdle
	}
	now, d := q.now(), maxIdle
	for host, h := range q.hosts {
		if len(h.items) == 0 {
			if !now.Before(h.due) {
				q.forget(host)
			}
			continue
		}
		d = min(d, h.due.Sub(now))
	}
	return d
}

// putBack returns an item a worker gave up on to the front of its host's
// queue and releases its lease.
func (q *Queue[T]) putBack(r Ready[T]) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.Lease.Release(ctx) // else it frees after LeaseTTL
	q.mu.Lock()
	h, ok := q.hosts[r.Lease.host]
	if !ok {
		h = &hostQueue[T]{rule: r.rule}
		q.hosts[r.Lease.host] = h
		q.order = append(q.order, r.Lease.host)
	}
	h.items = append([]T{r.Item}, h.items...)
	q.mu.Unlock()
	q.signal()
}
