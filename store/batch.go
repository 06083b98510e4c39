package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// SaveItems stores items with one unordered insert; an item that exists
// already (a redelivered task, a re-crawl) is replaced on its own. It
// returns one error per item, nil where the item was stored.
func (m *Mongo) SaveItems(ctx context.Context, items []Item) []error {
	errs := make([]error, len(items))
	docs := make([]any, len(items))
	for i := range items {
		docs[i] = items[i]
	}
	_, err := m.items.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	if err == nil {
		return errs
	}
	var bulk mongo.BulkWriteException
	if !errors.As(err, &bulk) || len(bulk.WriteErrors) == 0 {
		for i := range errs {
			errs[i] = fmt.Errorf("insert %d items: %w", len(items), err)
		}
		return errs
	}
	for _, we := range bulk.WriteErrors {
		it := items[we.Index]
		if !mongo.IsDuplicateKeyError(we) {
			errs[we.Index] = fmt.Errorf("insert items %s: %w", it.ID, we)
			continue
		}
		if _, err := m.items.ReplaceOne(ctx, bson.D{{Key: "_id", Value: it.ID}}, it); err != nil {
			errs[we.Index] = fmt.Errorf("replace items %s: %w", it.ID, err)
		}
	}
	return errs
}

// BatchWriter gathers the items that concurrent callers save into batches
// written with one round trip (Mongo.SaveItems). SaveItem still returns only
// once its own item is stored, so a caller may acknowledge its task then.
// Failures go straight through. Close writes what is pending and waits for
// every write.
type BatchWriter struct {
	m        *Mongo
	maxBatch int
	maxDelay time.Duration

	mu      sync.Mutex
	pending []pendingItem
	timer   *time.Timer
	closed  bool
	writes  sync.WaitGroup // batches being written
}

type pendingItem struct {
	item Item
	done chan error
}

// NewBatchWriter writes items to m in batches of up to maxBatch, waiting at
// most maxDelay for a batch to fill.
func NewBatchWriter(m *Mongo, maxBatch int, maxDelay time.Duration) *BatchWriter {
	return &BatchWriter{m: m, maxBatch: max(maxBatch, 1), maxDelay: maxDelay}
}

// SaveItem stores it in the next batch and waits until that batch is
// written, or ctx ends. After Close it fails with ErrClosed.
func (b *BatchWriter) SaveItem(ctx context.Context, it Item) error {
	done := make(chan error, 1)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return fmt.Errorf("save item %s: %w", it.ID, ErrClosed)
	}
	b.pending = append(b.pending, pendingItem{item: it, done: done})
	if len(b.pending) >= b.maxBatch {
		b.flushLocked()
	} else if b.timer == nil {
		b.timer = time.AfterFunc(b.maxDelay, b.flush)
	}
	b.mu.Unlock()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *BatchWriter) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

// flushLocked hands the pending batch to a goroutine that writes it.
func (b *BatchWriter) flushLocked() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	batch := b.pending
	b.pending = nil
	if len(batch) == 0 {
		return
	}
	b.writes.Add(1)
	go func() {
		defer b.writes.Done()
		b.write(batch)
	}()
}

func (b *BatchWriter) write(batch []pendingItem) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	items := make([]Item, len(batch))
	for i, p := range batch {
		items[i] = p.item
	}
	for i, err := range b.m.SaveItems(ctx, items) {
		batch[i].done <- err
	}
}

// Close writes the pending batch and waits until every batch is written,
// or ctx ends. It does not close the Mongo store under it.
func (b *BatchWriter) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	b.flushLocked()
	b.mu.Unlock()
	done := make(chan struct{})
	go func() {
		b.writes.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close batch writer: %w", ctx.Err())
	}
}

// SaveFailure records f at once.
func (b *BatchWriter) SaveFailure(ctx context.Context, f Failure) error {
	if err := b.open(); err != nil {
		return err
	}
	return b.m.SaveFailure(ctx, f)
}

// DeleteFailure drops a failure record at once.
func (b *BatchWriter) DeleteFailure(ctx context.Context, id string) error {
	if err := b.open(); err != nil {
		return err
	}
	return b.m.DeleteFailure(ctx, id)
}

// open returns ErrClosed after Close.
func (b *BatchWriter) open() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("batch writer: %w", ErrClosed)
	}
	return nil
}
