package testenv

import (
	"testing"
	"time"
)

// Eventually polls cond until it holds, and fails the test, naming what it
// waited for, if it does not within timeout. It polls every 5 ms at first
// and backs off to every 50 ms, so that a long wait on real processes
// does not load the machine it measures.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	pause := 5 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", timeout, what)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}
