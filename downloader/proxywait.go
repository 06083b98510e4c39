package downloader

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

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
// thousand; and a waiting page holds neither a worker nor a slot of its
// host. Once a proxy is free the waiting pages go on, a batch at a time,
// the first with the proxy the ask picked.
type proxyWaits struct {
	d *Downloader

	mu       sync.Mutex
	byTarget map[proxyTarget]*proxyWait
}

// proxyWait is one target's waiting requests.
type proxyWait struct {
	waiters []chan *proxy.Picked // each gets a proxy picked for it, or nil: go and pick
	probe   *url.URL             // what to ask the pool for: a URL of the target
	every   time.Duration
}

func newProxyWaits(d *Downloader) *proxyWaits {
	return &proxyWaits{d: d, byTarget: map[proxyTarget]*proxyWait{}}
}

// len is how many requests wait for a proxy.
func (w *proxyWaits) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, pw := range w.byTarget {
		n += len(pw.waiters)
	}
	return n
}

// waiting reports whether requests to t wait for a proxy now; a new
// request to t then waits with them rather than take a slot to find out.
func (w *proxyWaits) waiting(t proxyTarget) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byTarget[t] != nil
}

// wait makes r wait for a proxy for its target until the target's wait
// lets it go: with a proxy picked for it, or nil to pick one itself. busy
// says r found every proxy for the target at its cap (the first ask comes
// after ProxyBusyWait then, else after ProxyWait).
func (w *proxyWaits) wait(ctx context.Context, r *Request, u *url.URL, busy bool) (*proxy.Picked, error) {
	return w.join(ctx, r.target, u, busy)
}

// waitAny waits while the pool is empty.
func (w *proxyWaits) waitAny(ctx context.Context, u *url.URL) (*proxy.Picked, error) {
	return w.join(ctx, anyTarget, u, false)
}

func (w *proxyWaits) join(ctx context.Context, t proxyTarget, probe *url.URL, busy bool) (*proxy.Picked, error) {
	ch := make(chan *proxy.Picked, 1)
	w.mu.Lock()
	pw := w.byTarget[t]
	if pw == nil {
		pw = &proxyWait{probe: probe, every: w.d.opts.ProxyWait}
		if busy {
			pw.every = w.d.opts.ProxyBusyWait
		}
		w.byTarget[t] = pw
		time.AfterFunc(pw.every, func() { w.ask(t) })
	}
	pw.waiters = append(pw.waiters, ch)
	w.mu.Unlock()

	start := time.Now()
	select {
	case p := <-ch:
		w.d.deps.Metrics.Politeness().Waited(t.host, time.Since(start), "proxy")
		return p, nil
	case <-ctx.Done():
	}
	if !w.leave(t, ch) { // let go as we gave up: hand back what it brought
		w.d.dropPick(<-ch)
	}
	return nil, ctx.Err()
}

// leave takes ch out of t's wait; false if it was let go already.
func (w *proxyWaits) leave(t proxyTarget, ch chan *proxy.Picked) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	pw := w.byTarget[t]
	if pw == nil {
		return false
	}
	i := slices.Index(pw.waiters, ch)
	if i < 0 {
		return false
	}
	pw.waiters = slices.Delete(pw.waiters, i, i+1)
	return true
}

// ask asks the pool once for t's waiting requests: with a proxy free, a
// batch of them goes on (the first with the proxy just picked); with
// proxies only at their caps, t asks again after ProxyBusyWait; with none,
// t waits twice as long before it asks again.
func (w *proxyWaits) ask(t proxyTarget) {
	w.mu.Lock()
	pw := w.byTarget[t]
	w.mu.Unlock()
	if pw == nil {
		return
	}
	picked, state := w.d.probeProxy(t, pw.probe)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(pw.waiters) == 0 { // all gave up meanwhile
		delete(w.byTarget, t)
		w.d.dropPick(picked)
		return
	}
	switch state {
	case proxyFree:
		n := min(len(pw.waiters), w.d.opts.Workers)
		for i, ch := range pw.waiters[:n] {
			if i == 0 {
				ch <- picked
			} else {
				ch <- nil
			}
		}
		pw.waiters = pw.waiters[n:]
		if len(pw.waiters) == 0 {
			delete(w.byTarget, t)
			return
		}
		pw.every = w.d.opts.ProxyBusyWait // the rest ask again soon, after the batch had its turn
	case proxyBusy:
		pw.every = w.d.opts.ProxyBusyWait
	default:
		pw.every = min(2*pw.every, w.d.opts.MaxProxyWait)
	}
	time.AfterFunc(pw.every, func() { w.ask(t) })
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
		if d.counts.none(ctx, d.pool) {
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
