// Package ctxtime holds the one timing helper every long-running loop
// needs: a sleep that a context's end cuts short.
package ctxtime

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends and then returns ctx.Err(). A d <= 0
// returns at once with ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
