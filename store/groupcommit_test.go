package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// gatedWriter records each write; the first one waits for the gate.
type gatedWriter struct {
	gate   chan struct{}
	mu     sync.Mutex
	writes []string
	fail   error
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	first := len(g.writes) == 0
	g.writes = append(g.writes, string(p))
	g.mu.Unlock()
	if first && g.gate != nil {
		<-g.gate
	}
	if g.fail != nil {
		return 0, g.fail
	}
	return len(p), nil
}

func (g *gatedWriter) all() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.writes...)
}

// TestLineFile_groupCommit: while one batch is being written, the records
// of every other caller gather into the next batch, written with one write.
func TestLineFile_groupCommit(t *testing.T) {
	w := &gatedWriter{gate: make(chan struct{})}
	l := newLineFile("test", w, nil, nil, 0)
	ctx := context.Background()
	errs := make(chan error, 32)
	go func() { errs <- l.append(ctx, "k0", []byte("r0\n")) }()
	testenv.Eventually(t, 10*time.Second, "the first batch to be written", func() bool { return len(w.all()) == 1 })
	for i := 1; i < 32; i++ {
		go func() { errs <- l.append(ctx, fmt.Sprint("k", i), []byte(fmt.Sprintf("r%d\n", i))) }()
	}
	testenv.Eventually(t, 10*time.Second, "31 callers to join the next batch", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.pending != nil && l.pending.n == 31
	})
	close(w.gate)
	for i := 0; i < 32; i++ {
		if err := <-errs; err != nil {
			t.Errorf("append: %v", err)
		}
	}
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	writes := w.all()
	if len(writes) != 2 || strings.Count(writes[1], "\n") != 31 {
		t.Errorf("writes = %q; want two: r0, then the 31 others in one", writes)
	}
	if n := l.records(); n != 32 {
		t.Errorf("records = %d, want 32", n)
	}
}

// TestLineFile_duplicateWaits: a caller whose key is in a batch on its way
// waits for that batch; it does not return nil before the record is
// written.
func TestLineFile_duplicateWaits(t *testing.T) {
	w := &gatedWriter{gate: make(chan struct{})}
	l := newLineFile("test", w, nil, nil, 0)
	first := make(chan error, 1)
	go func() { first <- l.append(context.Background(), "k", []byte("r\n")) }()
	testenv.Eventually(t, 10*time.Second, "the batch to be written", func() bool { return len(w.all()) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := l.append(ctx, "k", []byte("r\n")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("append of a key being written = %v, want it to wait (deadline exceeded)", err)
	}
	close(w.gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := l.append(context.Background(), "k", []byte("r\n")); err != nil {
		t.Errorf("append of a written key = %v, want nil", err)
	}
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	if writes := w.all(); len(writes) != 1 {
		t.Errorf("writes = %q, want the record once", writes)
	}
}

// TestLineFile_stickyError: after a failed write nothing more is written
// (it could land after a partial batch) and every caller gets the error.
func TestLineFile_stickyError(t *testing.T) {
	disk := errors.New("no space left on device")
	w := &gatedWriter{fail: disk}
	l := newLineFile("test", w, nil, nil, 0)
	ctx := context.Background()
	if err := l.append(ctx, "a", []byte("a\n")); !errors.Is(err, disk) {
		t.Errorf("append = %v, want the write error", err)
	}
	for _, key := range []string{"a", "b"} {
		if err := l.append(ctx, key, []byte(key+"\n")); !errors.Is(err, disk) {
			t.Errorf("append(%s) after a failure = %v, want the write error", key, err)
		}
	}
	if err := l.close(); !errors.Is(err, disk) {
		t.Errorf("close = %v, want the write error", err)
	}
	if writes := w.all(); len(writes) != 1 {
		t.Errorf("writes = %q, want only the failed one", writes)
	}
}
