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

// validatorsChunk bounds the IDs of one $in query.
const validatorsChunk = 1000

// storedProjection is what Validators reads of an item.
var storedProjection = bson.D{{Key: "etag", Value: 1}, {Key: "last_modified", Value: 1}, {Key: "content_hash", Value: 1},
	{Key: "version", Value: 1}, {Key: "changed_round", Value: 1}, {Key: "first_seen_at", Value: 1}, {Key: "changed_at", Value: 1},
	{Key: "round", Value: 1}, {Key: "check_every", Value: 1}, {Key: "next_check_at", Value: 1}}

// Validators reads what is stored of the items ids (validators, content
// hash, version), one query per thousand IDs, never one per page. An ID
// not stored is not in the map.
func (m *Mongo) Validators(ctx context.Context, ids []string) (map[string]Stored, error) {
	out := make(map[string]Stored, len(ids))
	for from := 0; from < len(ids); from += validatorsChunk {
		chunk := ids[from:min(from+validatorsChunk, len(ids))]
		cur, err := m.items.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: chunk}}}},
			options.Find().SetProjection(storedProjection))
		if err != nil {
			return nil, fmt.Errorf("read validators of %d items: %w", len(chunk), err)
		}
		var docs []struct {
			ID     string `bson:"_id"`
			Stored `bson:",inline"`
		}
		if err := cur.All(ctx, &docs); err != nil {
			return nil, fmt.Errorf("read validators of %d items: %w", len(chunk), err)
		}
		for _, d := range docs {
			out[d.ID] = d.Stored
		}
	}
	return out, nil
}

// SaveVisits records a batch of visits and says what each found (see
// Change): a new page is inserted as version 1 (one insert for the batch);
// a changed one replaced with its version bumped; an unchanged or
// not-modified one gets only checked_at rewritten (and its validators,
// when the site sent new ones), one update by _id each.
// What is stored of a page is Visit.Prev when Visit.Looked; else the page
// is inserted, and read only if it exists already.
func (m *Mongo) SaveVisits(ctx context.Context, now time.Time, visits []Visit) []VisitResult {
	res := make([]VisitResult, len(visits))
	var inserts, touches []int
	items := make([]Item, len(visits))
	for i, v := range visits {
		var w write
		items[i], res[i].Change, w = plan(v.Prev, v, now)
		res[i].Version = versionAfter(items[i], v.Prev)
		switch w {
		case writeInsert:
			inserts = append(inserts, i)
		case writeTouch:
			touches = append(touches, i)
		default:
			res[i].Err = m.replace(ctx, items[i])
		}
	}
	m.insertVisits(ctx, now, visits, items, inserts, res)
	m.touchAll(ctx, items, touches, res)
	return res
}

// lookAgain records a visit whose page turned out to be stored: it reads
// what is stored, then records the visit against it.
func (m *Mongo) lookAgain(ctx context.Context, now time.Time, v Visit) VisitResult {
	prevs, err := m.Validators(ctx, []string{v.Item.ID})
	if err != nil {
		return VisitResult{Err: err}
	}
	v.Looked, v.Prev = true, nil
	if p, ok := prevs[v.Item.ID]; ok {
		v.Prev = &p
	}
	return m.SaveVisits(ctx, now, []Visit{v})[0]
}

// insertVisits inserts the new pages with one unordered insert; a page
// stored meanwhile (a race with another writer) is recorded on its own.
func (m *Mongo) insertVisits(ctx context.Context, now time.Time, visits []Visit, items []Item, idx []int, res []VisitResult) {
	if len(idx) == 0 {
		return
	}
	docs := make([]any, len(idx))
	for k, i := range idx {
		docs[k] = items[i]
	}
	_, err := m.items.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	if err == nil {
		return
	}
	var bulk mongo.BulkWriteException
	if !errors.As(err, &bulk) || len(bulk.WriteErrors) == 0 {
		for _, i := range idx {
			res[i].Err = fmt.Errorf("insert %d items: %w", len(idx), err)
		}
		return
	}
	for _, we := range bulk.WriteErrors {
		i := idx[we.Index]
		if !mongo.IsDuplicateKeyError(we) {
			res[i].Err = fmt.Errorf("insert items %s: %w", items[i].ID, we)
			continue
		}
		res[i] = m.lookAgain(ctx, now, visits[i])
	}
}

// replace writes the whole item.
func (m *Mongo) replace(ctx context.Context, it Item) error {
	if _, err := m.items.ReplaceOne(ctx, bson.D{{Key: "_id", Value: it.ID}}, it); err != nil {
		return fmt.Errorf("replace items %s: %w", it.ID, err)
	}
	return nil
}

// touch rewrites checked_at, the validators the site sent and the next
// check.
func (m *Mongo) touch(ctx context.Context, it Item) error {
	set := bson.D{{Key: "checked_at", Value: it.CheckedAt}}
	if it.ETag != "" {
		set = append(set, bson.E{Key: "etag", Value: it.ETag})
	}
	if it.LastModified != "" {
		set = append(set, bson.E{Key: "last_modified", Value: it.LastModified})
	}
	if !it.NextCheckAt.IsZero() {
		set = append(set, bson.E{Key: "check_every", Value: it.CheckEvery}, bson.E{Key: "next_check_at", Value: it.NextCheckAt})
	}
	if _, err := m.items.UpdateOne(ctx, bson.D{{Key: "_id", Value: it.ID}}, bson.D{{Key: "$set", Value: set}}); err != nil {
		return fmt.Errorf("update checked_at of %s: %w", it.ID, err)
	}
	return nil
}

// touchConcurrency bounds the checked_at updates of one batch in flight.
const touchConcurrency = 8

// touchAll rewrites checked_at of the pages idx, one update by _id per
// page, a few at a time. One UpdateMany with {_id: {$in: ids}} would be one
// round trip on MongoDB, but on FerretDB it costs twice as much per page
// as single updates (BenchmarkMongo_TouchBatch), so single updates it is.
func (m *Mongo) touchAll(ctx context.Context, items []Item, idx []int, res []VisitResult) {
	sem := make(chan struct{}, touchConcurrency)
	var wg sync.WaitGroup
	for _, i := range idx {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			res[i].Err = m.touch(ctx, items[i])
		}()
	}
	wg.Wait()
}
