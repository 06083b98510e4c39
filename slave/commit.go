package slave

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/neardup"
	"github.com/crawler-dev/crawler/sink"
	"github.com/crawler-dev/crawler/store"
)

// Committing items is batched: one near-duplicate script call per job, one
// store write and one acknowledgement per batch, instead of one of each per
// page. commitBatch is the most items in one batch, commitEvery how long an
// item waits for others to share it: long enough that a slave crawling
// polite hosts (a few hundred pages a second, each a tenth of a second or
// more) commits them in batches of dozens, short beside the task lease and
// the page's own fetch. A slave with nothing left in flight commits at
// once: the last pages of a crawl do not wait. A batch of fewer than
// commitFew items waits for more up to commitWait: a slave crawling a few
// polite hosts (a page every 40ms, say) then commits a dozen pages a call,
// not two or three, for a near-duplicate call (two when another slave
// appended first) and an acknowledgement per batch.
const (
	commitBatch = 256
	commitEvery = 100 * time.Millisecond
	commitFew   = 16
	commitWait  = 500 * time.Millisecond
)

// pendingItem is an extracted item waiting to be committed.
type pendingItem struct {
	w       *work
	item    store.Item
	retries int
	found   string    // the page's Found entry, "" for none
	added   time.Time // when it was queued for commit
}

// committer commits the items of fetched pages in batches: it marks
// near-duplicates, stores the items, and only then hands their outcomes to
// the acker. A batch that cannot be committed (Redis or the store away)
// lets its tasks go, to be delivered again.
type committer struct {
	s       *Slave
	mu      sync.Mutex
	pending []pendingItem
	kick    chan struct{}
	closed  chan struct{}
	once    sync.Once
	waiting atomic.Int64 // items added and not yet committed
}

func newCommitter(s *Slave) *committer {
	return &committer{s: s, kick: make(chan struct{}, 1), closed: make(chan struct{})}
}

// add queues an item; it never blocks.
func (c *committer) add(w *work, it store.Item, retries int, found string) {
	c.waiting.Add(1)
	c.mu.Lock()
	c.pending = append(c.pending, pendingItem{w: w, item: it, retries: retries, found: found, added: time.Now()})
	full := len(c.pending) >= commitBatch
	c.mu.Unlock()
	if full || c.s.pending() == 0 {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// close asks run to commit what is left and return.
func (c *committer) close() { c.once.Do(func() { close(c.closed) }) }

// run commits batches until closed (then commits the rest) or ctx ends.
func (c *committer) run(ctx context.Context) {
	t := time.NewTicker(commitEvery)
	defer t.Stop()
	for {
		closing := false
		select {
		case <-ctx.Done():
			return
		case <-c.closed:
			closing = true
		case <-c.kick:
		case <-t.C:
			if !c.due() {
				continue
			}
		}
		for batch := c.take(); len(batch) > 0; batch = c.take() {
			c.commit(ctx, batch)
		}
		if closing {
			return
		}
	}
}

// due reports whether the items waiting are worth a commit at a tick: a
// batch of commitFew or more, or one whose oldest item has waited
// commitWait, or any when nothing is left in flight.
func (c *committer) due() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.pending)
	return n >= commitFew || (n > 0 && (time.Since(c.pending[0].added) >= commitWait || c.s.pending() == 0))
}

func (c *committer) take() []pendingItem {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(c.pending), commitBatch)
	batch := c.pending[:n:n]
	c.pending = c.pending[n:]
	return batch
}

// commit marks near-duplicates, stores the items, sends them to the
// sinks and queues their acknowledgements: a task is acknowledged only
// once its item is in the store and in every sink.
func (c *committer) commit(ctx context.Context, batch []pendingItem) {
	defer c.waiting.Add(-int64(len(batch)))
	batch = c.markNear(ctx, batch)
	errs := c.save(ctx, batch)
	c.sendFound(ctx, batch, errs)
	batch = c.dropFailures(ctx, batch, errs)
	for i, err := range c.sink(ctx, batch) {
		p := batch[i]
		if err != nil {
			c.s.letGo(ctx, p.w, fmt.Errorf("send item %s to the sinks: %w", p.item.URL, err))
			continue
		}
		c.s.acks.add(p.w.job, p.w.job.kindCounts(p.w.task, ledger.Outcome{Task: p.w.raw, FP: p.w.task.FP, Retried: p.w.task.Retry,
			NearDuplicate: p.item.NearDuplicateOf != "", Retries: p.retries, Counts: p.w.counts()}))
	}
}

// dropFailures lets go the items that could not be stored and drops the
// failure records of retried pages now stored; it returns the items
// stored.
func (c *committer) dropFailures(ctx context.Context, batch []pendingItem, errs []error) []pendingItem {
	stored := make([]pendingItem, 0, len(batch))
	for i, p := range batch {
		if errs[i] != nil {
			c.s.letGo(ctx, p.w, fmt.Errorf("store item %s: %w", p.item.URL, errs[i]))
			continue
		}
		// a failure record is dropped when the page is stored: a retried
		// one's, or one an earlier delivery wrote before its holder died
		if p.w.task.Retry || p.w.deliveries > 1 {
			if err := c.s.deps.Store.DeleteFailure(ctx, p.item.ID); err != nil {
				c.s.letGo(ctx, p.w, fmt.Errorf("drop failure record of %s: %w", p.item.URL, err))
				continue
			}
		}
		stored = append(stored, p)
	}
	return stored
}

// sink sends the stored items to the sinks, which keep trying while ctx
// lives: a sink that is down holds the batch, and the committer with it,
// so the slave takes no more tasks than it can hold (see held).
func (c *committer) sink(ctx context.Context, batch []pendingItem) []error {
	if c.s.deps.Sinks == nil {
		return make([]error, len(batch))
	}
	recs := make([]sink.Record, len(batch))
	for i, p := range batch {
		recs[i] = sink.Record{Item: p.item, NotModified: p.w.visit.notModified, Retried: p.w.task.Retry, Exchange: p.w.exchange}
	}
	return c.s.deps.Sinks.Put(ctx, recs)
}

// held is how many items wait in the committer, stored or not.
func (c *committer) held() int { return int(c.waiting.Load()) }

// markNear looks the batch up in each job's near-duplicate index, one call
// per job, and returns the items it could check; the others are let go.
func (c *committer) markNear(ctx context.Context, batch []pendingItem) []pendingItem {
	byJob := map[*job][]int{}
	ok := make([]bool, len(batch))
	for i, p := range batch {
		if p.w.visit.notModified { // no fields, nothing to compare
			ok[i] = true
			continue
		}
		byJob[p.w.job] = append(byJob[p.w.job], i)
	}
	for j, idx := range byJob {
		entries := make([]neardup.Entry, len(idx))
		for k, i := range idx {
			entries[k] = neardup.Entry{ID: batch[i].item.URL, Hash: uint64(batch[i].item.Simhash)}
		}
		res, err := j.near.FindOrAdd(ctx, entries)
		if err == nil {
			entries, bytes := j.near.Held()
			c.s.jobs.near.Set(j.name, entries, bytes)
		}
		for k, i := range idx {
			if err != nil {
				c.s.letGo(ctx, batch[i].w, fmt.Errorf("near-duplicate check of %s: %w", batch[i].item.URL, err))
				continue
			}
			batch[i].item.NearDuplicateOf = res[k].Of
			ok[i] = true
		}
	}
	kept := batch[:0]
	for i, p := range batch {
		if ok[i] {
			kept = append(kept, p)
		}
	}
	return kept
}
