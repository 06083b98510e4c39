package slave

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/internal/ctxtime"
	"github.com/crawler-dev/crawler/ledger"
)

// ackBatch is how many outcomes one acknowledgement carries at most, and
// ackEvery how long an outcome waits for others to share its round trip.
const (
	ackBatch = 200
	ackEvery = 20 * time.Millisecond
)

// acker batches acknowledgements: one script call per job per flush. An
// outcome whose acknowledgement fails (Redis is away) is kept and retried;
// its item is already stored, so if the process dies first, the task is
// redelivered and the store write is idempotent.
type acker struct {
	s   *Slave
	log *zap.Logger

	mu      sync.Mutex
	pending map[*job][]ledger.Outcome
	kick    chan struct{}
	closed  chan struct{}
	once    sync.Once
}

func newAcker(s *Slave, log *zap.Logger) *acker {
	return &acker{s: s, log: log, pending: map[*job][]ledger.Outcome{},
		kick: make(chan struct{}, 1), closed: make(chan struct{})}
}

func (a *acker) add(j *job, o ledger.Outcome) {
	a.mu.Lock()
	a.pending[j] = append(a.pending[j], o)
	full := len(a.pending[j]) >= ackBatch
	a.mu.Unlock()
	if full {
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
}

// close asks run to flush what is left and return.
func (a *acker) close() { a.once.Do(func() { close(a.closed) }) }

// run flushes until closed (then flushes the rest) or ctx ends.
func (a *acker) run(ctx context.Context) {
	t := time.NewTicker(ackEvery)
	defer t.Stop()
	backoff := ackEvery
	for {
		closing := false
		select {
		case <-ctx.Done():
			return
		case <-a.closed:
			closing = true
		case <-a.kick:
		case <-t.C:
		}
		if a.flush(ctx) {
			backoff = ackEvery
		} else {
			backoff = min(2*backoff, 5*time.Second)
			_ = ctxtime.Sleep(ctx, backoff)
		}
		if closing && a.empty() {
			return
		}
	}
}

// flush acknowledges everything pending; it reports false if any failed.
func (a *acker) flush(ctx context.Context) bool {
	a.mu.Lock()
	batches := a.pending
	a.pending = map[*job][]ledger.Outcome{}
	a.mu.Unlock()
	ok := true
	for j, outs := range batches {
		for start := 0; start < len(outs); start += ackBatch {
			part := outs[start:min(start+ackBatch, len(outs))]
			if _, err := j.ledger.Ack(ctx, a.s.opts.ID, part); err != nil {
				a.log.Warn("acknowledge tasks; will retry", zap.String("job", j.name), zap.Error(err))
				a.requeue(j, outs[start:])
				ok = false
				break
			}
			for _, o := range part {
				a.s.held.remove(j, o.Task)
			}
		}
	}
	return ok
}

func (a *acker) requeue(j *job, outs []ledger.Outcome) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pending[j] = append(outs, a.pending[j]...)
}

func (a *acker) empty() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending) == 0
}
