package proxy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// lease takes the validator's lease, or renews it if this validator holds
// it; ErrLeaseHeld if another does.
func (v *Validator) lease(ctx context.Context) error {
	res, err := leaseScript.Run(ctx, v.rdb, []string{v.keys.Lease()}, v.token, v.opts.Lease.Milliseconds()).Int64Slice()
	if err != nil {
		return fmt.Errorf("proxy validator lease: %w", err)
	}
	if res[0] != 1 {
		return fmt.Errorf("%w (for %dms more)", ErrLeaseHeld, res[1])
	}
	return nil
}

// renew extends the lease if this validator still holds it; ErrLeaseLost
// if it lapsed or another validator holds it now.
func (v *Validator) renew(ctx context.Context) error {
	res, err := renewScript.Run(ctx, v.rdb, []string{v.keys.Lease()}, v.token, v.opts.Lease.Milliseconds()).Slice()
	if err != nil {
		return fmt.Errorf("renew proxy validator lease: %w", err)
	}
	if ok, _ := res[0].(int64); ok != 1 {
		holder, _ := res[1].(string)
		if holder == "" {
			return fmt.Errorf("%w: it lapsed", ErrLeaseLost)
		}
		return fmt.Errorf("%w: %s holds it", ErrLeaseLost, holder)
	}
	return nil
}

// keepLease renews the lease every third of its TTL until the returned
// stop is called, so a round that outlasts the lease keeps it. When the
// lease is lost it cancels the returned context with ErrLeaseLost, and
// stop returns that error; the scripts that record results check the
// lease themselves, so a write that races the loss is refused too.
func (v *Validator) keepLease(ctx context.Context) (context.Context, func() error) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(max(v.opts.Lease/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			// Other errors (Redis unreachable) are retried on the next
			// tick; if the lease lapses meanwhile, the record script says so.
			if err := v.renew(ctx); errors.Is(err, ErrLeaseLost) {
				cancel(err)
				return
			}
		}
	}()
	return ctx, func() error {
		close(done)
		wg.Wait()
		err := context.Cause(ctx)
		cancel(nil)
		if errors.Is(err, ErrLeaseLost) {
			return err
		}
		return nil
	}
}

// release gives the lease up if this validator holds it.
func (v *Validator) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = releaseScript.Run(ctx, v.rdb, []string{v.keys.Lease()}, v.token).Err()
}
