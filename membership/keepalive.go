package membership

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/cluster"
)

// minBackoff is the first wait before retrying a transient Redis error.
const minBackoff = 50 * time.Millisecond

// KeepAlive registers info, renews its lease every Lease/3 until ctx ends,
// then deregisters it and returns nil. It returns an error wrapping
// ErrLeaseLost if the lease is lost (it lapsed, or another run took the ID),
// and ErrIDTaken, ErrInvalidNode or ErrMaxSlavesMismatch if it cannot
// register. Transient Redis errors are retried with backoff while the lease
// lasts. A zero StartedAt is set to now.
func (r *Registry) KeepAlive(ctx context.Context, info cluster.NodeInfo) error {
	if info.StartedAt.IsZero() {
		info.StartedAt = time.Now()
	}
	register := func(ctx context.Context) error { return r.Register(ctx, info) }
	if err := r.retry(ctx, "register", register); err != nil {
		return err
	}
	ticker := time.NewTicker(r.opts.Lease / 3)
	defer ticker.Stop()
	heartbeat := func(ctx context.Context) error { return r.Heartbeat(ctx, info.ID, info.Token) }
	for {
		select {
		case <-ctx.Done():
			return r.leave(ctx, info)
		case <-ticker.C:
		}
		if err := r.retry(ctx, "heartbeat", heartbeat); err != nil {
			return err
		}
	}
}

// leave deregisters info after ctx ended, with a context of its own.
func (r *Registry) leave(ctx context.Context, info cluster.NodeInfo) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.Lease)
	defer cancel()
	err := r.Deregister(ctx, info.ID, info.Token)
	if err != nil && !errors.Is(err, ErrLeaseLost) {
		return fmt.Errorf("keepalive: %w", err)
	}
	return nil
}

// retry runs op until it succeeds, fails permanently, or ctx ends (which
// returns nil). Each attempt gets Lease/3 to answer; transient errors are
// logged and retried after a doubling backoff capped at Lease/3.
func (r *Registry) retry(ctx context.Context, what string, op func(context.Context) error) error {
	backoff := minBackoff
	for {
		attempt, cancel := context.WithTimeout(ctx, r.opts.Lease/3)
		err := op(attempt)
		cancel()
		if err == nil || ctx.Err() != nil {
			return nil
		}
		if permanent(err) {
			return fmt.Errorf("keepalive: %w", err)
		}
		r.log.Warn("keepalive retrying", zap.String("step", what), zap.Duration("backoff", backoff), zap.Error(err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, r.opts.Lease/3)
	}
}

// permanent reports whether err cannot be cured by retrying.
func permanent(err error) bool {
	return errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrIDTaken) ||
		errors.Is(err, ErrInvalidNode) || errors.Is(err, ErrMaxSlavesMismatch)
}

// Watch takes a Snapshot now and then every interval until ctx ends, and
// calls fn with the table whenever its version differs from the last one
// fn saw (the first snapshot always). Snapshot also drops lapsed leases, so
// a master running Watch notices a dead slave within Lease plus every.
// Transient errors are logged and retried at the next tick; Watch returns
// nil when ctx ends, or an error wrapping ErrMaxSlavesMismatch. every <= 0
// means Lease/5.
func (r *Registry) Watch(ctx context.Context, every time.Duration, fn func(assign.Table)) error {
	if every <= 0 {
		every = r.opts.Lease / 5
	}
	return r.WatchEvery(ctx, func() time.Duration { return every }, nil, fn)
}

// WatchEvery is Watch with an interval asked for before each wait: a
// master watches closely while it runs jobs and rarely while idle, so an
// idle cluster costs Redis little. A receive on wake (nil: never) cuts the
// wait short, so a master that takes a job on reads the table at once
// instead of routing on one up to an idle interval old.
func (r *Registry) WatchEvery(ctx context.Context, every func() time.Duration, wake <-chan struct{}, fn func(assign.Table)) error {
	last := int64(-1)
	for {
		table, err := r.Snapshot(ctx)
		switch {
		case err == nil && table.Version != last:
			last = table.Version
			fn(table)
		case errors.Is(err, ErrMaxSlavesMismatch):
			return fmt.Errorf("watch: %w", err)
		case err != nil && ctx.Err() == nil:
			r.log.Warn("watch snapshot failed", zap.Error(err))
		}
		t := time.NewTimer(every())
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-wake:
			t.Stop()
		case <-t.C:
		}
	}
}
