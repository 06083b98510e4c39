package membership

import (
	"context"
	"errors"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
)

// Claim registers info like Register, and settles who holds the ID when a
// live registration of another run is in the way. A slave killed with -9
// leaves its registration alive for up to a lease; restarted on the same
// host, it recognises it when the process that registered is gone, and
// takes the ID over at once. Otherwise Claim waits, saying so in the log,
// until the holder's lease either lapses (the ID is taken) or is renewed
// (the holder is alive: a *TakenError, errors.Is ErrIDTaken).
func (r *Registry) Claim(ctx context.Context, info cluster.NodeInfo) error {
	err := r.Register(ctx, info)
	var taken *TakenError
	if !errors.As(err, &taken) {
		return err
	}
	h := taken.Holder
	if h.Host == info.Host && h.PID != info.PID && !processAlive(h.PID) {
		r.log.Info("replacing the registration of this slave's previous process, which is gone",
			zap.Int("slave", info.ID), zap.Int("old_pid", h.PID))
		return r.register(ctx, info, h.Token)
	}
	r.log.Warn("slave id held by another registration; waiting for its lease to lapse",
		zap.Int("slave", info.ID), zap.String("holder_host", h.Host), zap.Int("holder_pid", h.PID),
		zap.Time("lease_until", taken.Until))
	return r.waitLapse(ctx, info, taken)
}

// waitLapse registers info once the holder's lease has lapsed; it returns
// the holder's TakenError when the holder renews it.
func (r *Registry) waitLapse(ctx context.Context, info cluster.NodeInfo, taken *TakenError) error {
	for {
		wait := time.Until(taken.Until) + 50*time.Millisecond
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(max(wait, 10*time.Millisecond)):
		}
		err := r.Register(ctx, info)
		var again *TakenError
		if !errors.As(err, &again) {
			return err
		}
		if again.Holder.Token == taken.Holder.Token && again.Until.After(taken.Until) {
			return again // renewed: the holder is alive
		}
		taken = again
	}
}

// processAlive reports whether a process with that pid runs on this host.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
