package slave

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/internal/ctxtime"
)

// markWait bounds how long a fetched page waits for its start mark: with Redis
// away the page is extracted anyway, and a holder that dies with it then is
// not counted against it.
const markWait = 2 * time.Second

// markSpacing bounds the time between two groups of marks: a slave whose
// fetches begin one at a time as host slots free up writes them a group
// at a time, not one script call per page. The spacing is most of the
// pages' recent fetch time, or the time markFew fetches take to begin at
// the recent pace when that is longer, within these bounds: a mark is
// mostly written while its page is fetched, and a slave crawling a few
// polite hosts (a fetch beginning every 50ms, each a tenth of a second)
// writes a group of five every 250ms, not one or two every 80ms; its
// pages wait a little for their marks after the fetch, holding no host
// slot.
const (
	minMarkSpacing = 5 * time.Millisecond
	maxMarkSpacing = 250 * time.Millisecond
	markFew        = 8
)

// marker writes the start marks of tasks whose fetch begins (see
// queue.Leased.MarkStarted), so that of the deliveries that end without
// an outcome only those whose fetch had begun count toward dead-lettering.
// Marks are written in groups: whatever began while the last group was
// being written, or in the markSpacing after it, goes in the next one, so
// a mark costs a fetch about one round trip, overlapped with its fetch, and
// no more than one script call is in progress.
type marker struct {
	s    *Slave
	log  *zap.Logger
	mu   sync.Mutex
	next map[*job][]string
	done chan struct{} // closed when the group being gathered is written
	kick chan struct{}
	// last is when the last fetch began (unix ns), gap the time between
	// two beginnings lately (smoothed): the pace that spaces the groups.
	last atomic.Int64
	gap  ewma
}

func newMarker(s *Slave, log *zap.Logger) *marker {
	return &marker{s: s, log: log, next: map[*job][]string{}, done: make(chan struct{}), kick: make(chan struct{}, 1)}
}

// started queues w's start mark and returns at once: the mark is written
// while the page is fetched, so no host slot is held for it. The slave
// waits for it (wait) before it extracts the page, so a page whose
// content crashes its holder is marked by then.
func (m *marker) started(w *work) {
	now := time.Now().UnixNano()
	if last := m.last.Swap(now); last != 0 {
		m.gap.add(time.Duration(now - last))
	}
	m.mu.Lock()
	m.next[w.job] = append(m.next[w.job], w.raw)
	w.marked = m.done
	m.mu.Unlock()
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// spacing is the time to the next group of marks: four fifths of the
// recent fetch time, or the time markFew fetches take to begin when that
// is longer, within minMarkSpacing and maxMarkSpacing.
func (m *marker) spacing() time.Duration {
	return min(max(m.s.fetchTime.get()*4/5, markFew*m.gap.get(), minMarkSpacing), maxMarkSpacing)
}

// wait waits until w's start mark is written, or markWait has passed, or
// ctx ends; at once if w was never marked.
func (m *marker) wait(ctx context.Context, w *work) {
	m.mu.Lock()
	done := w.marked
	m.mu.Unlock()
	if done == nil {
		return
	}
	t := time.NewTimer(markWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// run writes the marks in groups until ctx ends.
func (m *marker) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.kick:
		}
		m.mu.Lock()
		group, done := m.next, m.done
		m.next, m.done = map[*job][]string{}, make(chan struct{})
		m.mu.Unlock()
		for j, raws := range group {
			if _, err := j.queue.MarkStarted(ctx, raws); err != nil && ctx.Err() == nil {
				m.log.Warn("mark tasks started", zap.String("job", j.name), zap.Error(err))
			}
		}
		close(done)
		if ctxtime.Sleep(ctx, m.spacing()) != nil {
			return
		}
	}
}
