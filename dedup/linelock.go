package dedup

import (
	"context"
	"slices"
	"sync"
)

// lineLocks are the lines (spot.line) that calls of one filter are
// writing. A call that may write a line without reading it first takes
// every line of its batch, all at once or none (so two calls never wait
// on each other), and holds them until its confirmed writes are in the
// copies; a call that wants a held line waits for it.
type lineLocks struct {
	mu    sync.Mutex
	held  map[uint64]struct{}
	freed chan struct{} // closed and replaced when lines are released
}

// lock takes lines (sorted and without repeats) once none is held, or
// returns ctx's error.
func (l *lineLocks) lock(ctx context.Context, lines []uint64) error {
	for {
		l.mu.Lock()
		if l.held == nil {
			l.held, l.freed = make(map[uint64]struct{}), make(chan struct{})
		}
		if !l.busy(lines) {
			for _, x := range lines {
				l.held[x] = struct{}{}
			}
			l.mu.Unlock()
			return nil
		}
		freed := l.freed
		l.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *lineLocks) busy(lines []uint64) bool {
	for _, x := range lines {
		if _, ok := l.held[x]; ok {
			return true
		}
	}
	return false
}

// unlock releases lines taken by lock.
func (l *lineLocks) unlock(lines []uint64) {
	l.mu.Lock()
	for _, x := range lines {
		delete(l.held, x)
	}
	close(l.freed)
	l.freed = make(chan struct{})
	l.mu.Unlock()
}

// batchLines is the distinct lines of spots, sorted.
func batchLines(spots []spot) []uint64 {
	out := make([]uint64, len(spots))
	for i, sp := range spots {
		out[i] = sp.line()
	}
	slices.Sort(out)
	return slices.Compact(out)
}
