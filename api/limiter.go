package api

import (
	"sync"
	"time"
)

// failureLimiter counts the failed authentications of each client address
// in a fixed window; once an address has failed max times, it is refused
// until its window ends. It keeps at most maxAddrs addresses: when full it
// forgets the expired windows, then, if still full, an arbitrary one, so a
// flood of addresses costs bounded memory.
type failureLimiter struct {
	max      int
	window   time.Duration
	maxAddrs int
	now      func() time.Time

	mu    sync.Mutex
	addrs map[string]*failures
}

// failures are one address's failures in its current window.
type failures struct {
	n     int
	since time.Time
}

func newFailureLimiter(max int, window time.Duration, maxAddrs int) *failureLimiter {
	return &failureLimiter{max: max, window: window, maxAddrs: maxAddrs, now: time.Now, addrs: map[string]*failures{}}
}

// blocked tells how long addr must wait before it is heard again; 0: it
// may try now.
func (l *failureLimiter) blocked(addr string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.current(addr)
	if f == nil || f.n < l.max {
		return 0
	}
	return f.since.Add(l.window).Sub(l.now())
}

// fail counts a failed attempt of addr.
func (l *failureLimiter) fail(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.current(addr)
	if f == nil {
		if len(l.addrs) >= l.maxAddrs {
			l.evict()
		}
		f = &failures{since: l.now()}
		l.addrs[addr] = f
	}
	f.n++
}

// current returns addr's failures if its window is still open.
func (l *failureLimiter) current(addr string) *failures {
	f := l.addrs[addr]
	if f != nil && l.now().Sub(f.since) >= l.window {
		delete(l.addrs, addr)
		return nil
	}
	return f
}

// evict makes room for one address.
func (l *failureLimiter) evict() {
	now := l.now()
	for addr, f := range l.addrs {
		if now.Sub(f.since) >= l.window {
			delete(l.addrs, addr)
		}
	}
	for addr := range l.addrs {
		if len(l.addrs) < l.maxAddrs {
			return
		}
		delete(l.addrs, addr)
	}
}
