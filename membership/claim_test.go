package membership

import (
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestRegistry_Claim covers the three ways a restarted slave finds its ID
// held (issue 8, defect 11: it used to exit "id taken").
func TestRegistry_Claim(t *testing.T) {
	host, _ := os.Hostname()
	t.Run("its own dead process on this host is replaced at once", func(t *testing.T) {
		r, _, _ := newRegistry(t, Options{Lease: time.Minute})
		old := node(1, "old")
		old.Host, old.PID = host, deadPID(t)
		mustRegister(t, r, old)
		fresh := node(1, "new")
		fresh.Host, fresh.PID = host, os.Getpid()
		start := time.Now()
		if err := r.Claim(ctx(t), fresh); err != nil {
			t.Fatalf("Claim: %v", err)
		}
		if waited := time.Since(start); waited > 30*time.Second {
			t.Errorf("Claim waited %s; the one-minute lease should not be waited out", waited)
		}
		nodes, _ := r.Nodes(ctx(t))
		if len(nodes) != 1 || nodes[0].Token != "new" {
			t.Errorf("live nodes = %+v, want only the new run", nodes)
		}
	})
	t.Run("a holder elsewhere that stopped renewing is waited out", func(t *testing.T) {
		r, _, _ := newRegistry(t, Options{})
		mustRegister(t, r, node(2, "gone")) // another host; never renews
		if err := r.Claim(ctx(t), node(2, "new")); err != nil {
			t.Fatalf("Claim: %v", err)
		}
		nodes, _ := r.Nodes(ctx(t))
		if len(nodes) != 1 || nodes[0].Token != "new" {
			t.Errorf("live nodes = %+v, want only the new run", nodes)
		}
	})
	t.Run("a live holder keeps its ID", func(t *testing.T) {
		r, _, _ := newRegistry(t, Options{})
		holder := node(3, "alive")
		holder.Host, holder.PID = host, os.Getpid() // alive: this very process
		mustRegister(t, r, holder)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				case <-time.After(testLease / 4):
					_ = r.Heartbeat(ctx(t), 3, "alive")
				}
			}
		}()
		defer func() { close(stop); <-done }()
		err := r.Claim(ctx(t), node(3, "intruder"))
		var taken *TakenError
		if !errors.Is(err, ErrIDTaken) || !errors.As(err, &taken) || taken.Holder.Token != "alive" {
			t.Fatalf("Claim = %v, want a TakenError naming the live holder", err)
		}
	})
}
