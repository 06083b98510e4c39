package ctxtime

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestSleep runs on synctest's clock: the hour passes the moment every
// goroutine waits, and the cancel lands exactly when the test says.
func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := Sleep(context.Background(), time.Hour); err != nil {
			t.Errorf("Sleep on a live context = %v, want nil", err)
		}
		if slept := time.Since(start); slept != time.Hour {
			t.Errorf("Sleep(1h) returned after %v, want 1h", slept)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(10*time.Minute, cancel)
		start = time.Now()
		if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep cut short by cancel = %v, want context.Canceled", err)
		}
		if slept := time.Since(start); slept != 10*time.Minute {
			t.Errorf("Sleep cut short after %v, want at the cancel (10m)", slept)
		}
		if err := Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep(0) on an ended context = %v, want context.Canceled", err)
		}
	})
}
