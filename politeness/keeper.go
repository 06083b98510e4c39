package politeness

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Keeper renews the leases of one process's requests while they run, so a
// request holds its place in its host's concurrency cap for as long as it
// takes (a job's timeout may be far longer than Options.LeaseTTL), while
// the leases of a process that dies still free after LeaseTTL. Every
// LeaseTTL/3 it renews, in one round trip, the leases not renewed for that
// long: a request that ends sooner costs Redis nothing. It is safe for
// concurrent use.
type Keeper struct {
	budget *Budget
	every  time.Duration
	log    *zap.Logger

	mu   sync.Mutex
	held map[*Lease]time.Time // when each lease's deadline was last set
}

// NewKeeper returns a Keeper renewing leases of b; Run renews. A nil log
// logs nothing.
func (b *Budget) NewKeeper(log *zap.Logger) *Keeper {
	if log == nil {
		log = zap.NewNop()
	}
	return &Keeper{budget: b, every: b.opts.LeaseTTL / 3, log: log.Named("politeness"), held: map[*Lease]time.Time{}}
}

// Hold renews l until Drop: call it as l's request starts.
func (k *Keeper) Hold(l *Lease) {
	k.mu.Lock()
	k.held[l] = l.granted
	k.mu.Unlock()
}

// Drop stops renewing l: call it as l's request ends, before Done or
// Release.
func (k *Keeper) Drop(l *Lease) {
	k.mu.Lock()
	delete(k.held, l)
	k.mu.Unlock()
}

// Held is how many leases the Keeper renews.
func (k *Keeper) Held() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.held)
}

// Run renews the leases held until ctx ends, then returns nil.
func (k *Keeper) Run(ctx context.Context) error {
	t := time.NewTicker(k.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		k.renew(ctx)
	}
}

// renew renews the leases whose deadline was set at least every ago.
func (k *Keeper) renew(ctx context.Context) {
	start := time.Now() // the new deadlines are set after this
	due := k.due(start)
	if len(due) == 0 {
		return
	}
	lost, err := k.budget.RenewMany(ctx, due)
	if err != nil {
		// The next tick tries again; a lease lapses only after LeaseTTL.
		k.log.Warn("renew host leases", zap.Int("leases", len(due)), zap.Error(err))
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, l := range due {
		if _, ok := k.held[l]; ok {
			k.held[l] = start
		}
	}
	for _, l := range lost {
		k.log.Debug("host lease lapsed before it was renewed", zap.String("host", l.host))
		delete(k.held, l)
	}
}

// due returns the leases last renewed at least every before now.
func (k *Keeper) due(now time.Time) []*Lease {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []*Lease
	for l, at := range k.held {
		if now.Sub(at) >= k.every {
			out = append(out, l)
		}
	}
	return out
}
