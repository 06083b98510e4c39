package downloader

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/proxy"
)

// proxyTarget is what a pick depends on besides the pool: the target's
// host and port (proxies are banned per host) and whether it needs a
// tunnel (https). The zero target stands for "any": the pool is empty.
type proxyTarget struct {
	host  string
	https bool
}

// targetOf is the proxy target of a request to u.
func targetOf(u *url.URL) proxyTarget {
	return proxyTarget{host: strings.ToLower(u.Host), https: u.Scheme == "https"}
}

// anyTarget is the wait of requests that found the pool empty.
var anyTarget = proxyTarget{}

// proxyWaits holds the requests of jobs that require a proxy while none is
// free for them, by target. One timer per target asks the pool again
// (after Options.ProxyWait, doubling up to MaxProxyWait while none comes
// free), so a thousand waiting pages cost one pick per wait, not a
// thousand; and a waiting page holds neither a worker nor a place in its
// host's budget. Once a proxy is free the waiting pages go back to their
// host's queue, a batch at a time.
type proxyWaits struct {
	d *Downloader

	mu       sync.Mutex
	byTarget map[proxyTarget]*proxyWait
	n        int // requests waiting, all targets
	stopped  bool
}

// proxyWait is one target's waiting requests.
type proxyWait struct {
	reqs  []*Request
	probe *url.URL // what to ask the pool for: a URL of the target
	every time.Duration
	timer *time.Timer
}

func newProxyWaits(d *Downloader) *proxyWaits {
	return &proxyWaits{d: d, byTarget: map[proxyTarget]*proxyWait{}}
}

// len is how many requests wait for a proxy.
func (w *proxyWaits) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// waiting reports whether requests to t wait for a proxy now; a new
// request to t then waits with them rather than take a lease to find out.
func (w *proxyWaits) waiting(t proxyTarget) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byTarget[t] != nil
}

// join makes r wait for a proxy for target t (probe is a URL of t), and
// starts t's wait if it is new: asking again after ProxyBusyWait when r
// found every proxy for t busy, else after ProxyWait.
func (w *proxyWaits) join(r *Request, t proxyTarget, probe *url.URL, busy bool) {
	if !w.d.track(r) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return // stop cancels the tracked request
	}
	pw := w.byTarget[t]
	if pw == nil {
		pw = &proxyWait{probe: probe, every: w.d.opts.ProxyWait}
		if busy {
			pw.every = w.d.opts.ProxyBusyWait
		}
		w.byTarget[t] = pw
		pw.timer = time.AfterFunc(pw.every, func() { w.ask(t) })
		if t != anyTarget { // the target's requests queued for their host wait too, leaseless
			queued := w.d.queue.Remove(r.host, func(q *Request) bool {
				return q.target == t && q.Job.Spec.Proxy == cluster.ProxyRequire && !q.proxyTurn && q.picked == nil
			})
			pw.reqs = append(pw.reqs, queued...)
			w.n += len(queued)
		}
	}
	pw.reqs = append(pw.reqs, r)
	w.n++
}

// ask asks the pool once for t's waiting requests: with a proxy free, a
// batch of them goes back to be admitted (the first with the proxy just
// picked); with proxies only at their caps, t asks again after
// ProxyBusyWait; with none, t waits twice as long before it asks again.
func (w *proxyWaits) ask(t proxyTarget) {
	w.mu.Lock()
	pw := w.byTarget[t]
	w.mu.Unlock()
	if pw == nil {
		return
	}
	picked, state := w.d.probeProxy(t, pw.probe)
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	if state != proxyFree {
		pw.every = min(2*pw.every, w.d.opts.MaxProxyWait)
		if state == proxyBusy {
			pw.every = w.d.opts.ProxyBusyWait
		}
		pw.timer = time.AfterFunc(pw.every, func() { w.ask(t) })
		w.mu.Unlock()
		return
	}
	batch := pw.reqs[:min(len(pw.reqs), w.d.opts.Workers)]
	pw.reqs = pw.reqs[len(batch):]
	w.n -= len(batch)
	if len(pw.reqs) == 0 {
		delete(w.byTarget, t)
	} else { // a proxy was free: the rest ask again soon, after the batch had its turn
		pw.every = w.d.opts.ProxyBusyWait
		pw.timer = time.AfterFunc(pw.every, func() { w.ask(t) })
	}
	w.mu.Unlock()
	for _, r := range batch {
		r.proxyTurn = true
		if picked != nil && !r.cancelled() {
			r.picked, picked = picked, nil
		}
		w.d.spawn(r, false)
	}
}

// stop stops every wait; the Downloader cancels the waiting requests.
func (w *proxyWaits) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	for _, pw := range w.byTarget {
		pw.timer.Stop()
	}
	w.byTarget, w.n = map[proxyTarget]*proxyWait{}, 0
}

// proxyState is what the pool answered a probe for a target.
type proxyState int

const (
	proxyNone proxyState = iota // no proxy can serve the target now
	proxyBusy                   // one could, but is at its cap
	proxyFree                   // one was picked
)

// probeProxy asks the pool whether a proxy is free for target t, with one
// pick (or, for anyTarget, the pool's size, read at most every few
// seconds). A proxy picked is returned, to be used, not wasted.
func (d *Downloader) probeProxy(t proxyTarget, probe *url.URL) (*proxy.Picked, proxyState) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if t == anyTarget {
		if d.proxies.none(ctx, d.pool) {
			return nil, proxyNone
		}
		return nil, proxyFree
	}
	p, err := d.pool.Pick(ctx, probe, nil)
	switch {
	case err == nil:
		return &p, proxyFree
	case errors.Is(err, proxy.ErrBusy):
		return nil, proxyBusy
	case !noneFree(err):
		d.log.Warn("ask the proxy pool; pages keep waiting", zap.String("host", t.host), zap.Error(err))
	}
	return nil, proxyNone
}
