package store

import (
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
