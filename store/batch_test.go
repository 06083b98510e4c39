package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestBatchWriter_SaveItem: concurrent savers share batches; new items are
// inserted, items that exist already (a redelivery, a re-crawl) are
// replaced, and each caller returns once its own item is stored.
func TestBatchWriter_SaveItem(t *testing.T) {
	m, db := openTestMongo(t)
	ctx := testCtx(t)
	item := func(i int, title string) Item {
		return Item{ID: ItemID("batch", fmt.Sprint(i)), URL: fmt.Sprintf("http://example.test/%d", i), Job: "batch",
			Fields: map[string]any{"title": title}, FetchedAt: time.Now().UTC(), Status: 200}
	}
	for i := 0; i < 10; i++ { // ten exist before
		if err := m.SaveItem(ctx, item(i, "old")); err != nil {
			t.Fatal(err)
		}
	}
	w := NewBatchWriter(m, 16, 5*time.Millisecond)
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.SaveItem(ctx, item(i, "new"))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("SaveItem(%d): %v", i, err)
		}
	}
	n, err := db.Collection("items").CountDocuments(ctx, bson.D{{Key: "job", Value: "batch"}})
	if err != nil || n != 40 {
		t.Fatalf("%d documents (%v), want 40", n, err)
	}
	old, err := db.Collection("items").CountDocuments(ctx, bson.D{{Key: "fields.title", Value: "old"}})
	if err != nil || old != 0 {
		t.Errorf("%d documents still old (%v), want every existing one replaced", old, err)
	}
}

// TestBatchWriter_Close: Close writes the pending batch and waits for it;
// a save after Close fails.
func TestBatchWriter_Close(t *testing.T) {
	m, db := openTestMongo(t)
	ctx := testCtx(t)
	w := NewBatchWriter(m, 100, time.Hour) // a batch that only Close sends
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		go func() {
			errs <- w.SaveItem(ctx, Item{ID: ItemID("close", fmt.Sprint(i)), URL: fmt.Sprint("http://example.test/", i), Job: "close"})
		}()
	}
	waitPending(t, w, 3)
	if err := w.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := count(t, db.Collection("items"), bson.D{{Key: "job", Value: "close"}}); n != 3 {
		t.Errorf("%d items written by Close, want 3", n)
	}
	for i := 0; i < 3; i++ {
		if err := <-errs; err != nil {
			t.Errorf("SaveItem: %v", err)
		}
	}
	if err := w.SaveItem(ctx, Item{ID: "close:late", URL: "late", Job: "close"}); !errors.Is(err, ErrClosed) {
		t.Errorf("SaveItem after Close = %v, want ErrClosed", err)
	}
}

func waitPending(t *testing.T, w *BatchWriter, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.mu.Lock()
		got := len(w.pending)
		w.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d items pending, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}
