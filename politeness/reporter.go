package politeness

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Reporter gathers the end of requests (Done) and tells each host's budget
// in one script call per host per flush, all hosts in one pipeline, instead
// of a round trip per request: a process sending hundreds of requests a
// second costs Redis a few calls. A lease is given back at most Every after
// its request ended; a report lost with its process frees its leases after
// Options.LeaseTTL, as a lease of a dead process does.
type Reporter struct {
	budget *Budget
	every  time.Duration
	max    int
	log    *zap.Logger

	mu      sync.Mutex
	pending map[string]*hostReport
	count   int
	kick    chan struct{}
}

// NewReporter returns a Reporter flushing every every, or when max reports
// are pending. Run flushes.
func (b *Budget) NewReporter(every time.Duration, max int, log *zap.Logger) *Reporter {
	if log == nil {
		log = zap.NewNop()
	}
	return &Reporter{budget: b, every: every, max: max, log: log,
		pending: map[string]*hostReport{}, kick: make(chan struct{}, 1)}
}

// Done reports that l's request ended with status (0: no answer) and, for
// a 429 or 503, the Retry-After it asked for; it never blocks.
func (r *Reporter) Done(l *Lease, status int, retryAfter time.Duration) {
	r.mu.Lock()
	rep := r.pending[l.host]
	if rep == nil {
		rep = &hostReport{}
		r.pending[l.host] = rep
	}
	rep.tokens = append(rep.tokens, l.token)
	rep.add(feedback(status), r.budget.pauseMS(retryAfter))
	r.count++
	full := r.count >= r.max
	r.mu.Unlock()
	if full || retryAfter > 0 { // a pause is news the cluster needs at once
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// Run flushes until ctx ends, then flushes what is left and returns nil.
// A flush is never cut short by ctx ending (its leases would be held for
// LeaseTTL after a graceful stop): each has a few seconds of its own.
func (r *Reporter) Run(ctx context.Context) error {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-r.kick:
		}
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		r.flush(flushCtx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
	}
}

// flush sends the pending reports, one script call per host.
func (r *Reporter) flush(ctx context.Context) {
	r.mu.Lock()
	pending := r.pending
	r.pending, r.count = map[string]*hostReport{}, 0
	r.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	keys := make([][]string, 0, len(pending))
	args := make([][]any, 0, len(pending))
	for host, rep := range pending {
		keys = append(keys, r.budget.hostKeys(host))
		args = append(args, r.budget.reportArgs(*rep))
	}
	if _, err := evalMany(ctx, r.budget.rdb, reportScript, keys, args); err != nil {
		// The leases lapse after LeaseTTL; the feedback is lost.
		r.log.Warn("report to host budgets", zap.Int("hosts", len(pending)), zap.Error(err))
	}
}
