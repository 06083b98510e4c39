package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// ExportItems writes a job's items to w as JSON Lines, in URL order, and
// returns how many it wrote.
func (m *Mongo) ExportItems(ctx context.Context, job string, w io.Writer) (int, error) {
	return m.ExportItemsAs(ctx, job, w, FormatJSONL)
}

// ExportItemsAs writes a job's items to w in format f, in URL order, and
// returns how many it wrote. For CSV it reads the job's field names first
// (FieldNames), for the header. An unknown job writes no items (an empty
// array for JSON, the header alone for CSV): ask JobExists to tell.
func (m *Mongo) ExportItemsAs(ctx context.Context, job string, w io.Writer, f Format) (int, error) {
	var fields []string
	if f == FormatCSV {
		var err error
		if fields, err = m.FieldNames(ctx, job); err != nil {
			return 0, err
		}
	}
	cur, err := m.items.Find(ctx, bson.D{{Key: "job", Value: job}},
		options.Find().SetSort(bson.D{{Key: "url", Value: 1}}))
	if err != nil {
		return 0, fmt.Errorf("find items of %s: %w", job, err)
	}
	defer cur.Close(ctx)
	iw := NewItemWriter(w, f, fields)
	n := 0
	for cur.Next(ctx) {
		var it Item
		if err := cur.Decode(&it); err != nil {
			return n, fmt.Errorf("decode item: %w", err)
		}
		it.Fields = plainFields(it.Fields)
		if err := iw.Write(it); err != nil {
			return n, fmt.Errorf("write item: %w", err)
		}
		n++
	}
	if err := cur.Err(); err != nil {
		return n, fmt.Errorf("read items of %s: %w", job, err)
	}
	if err := iw.Close(); err != nil {
		return n, fmt.Errorf("write items: %w", err)
	}
	return n, nil
}

// FieldNames returns the names of the fields a job's items carry, sorted:
// the CSV columns after the fixed ones. It reads every item's fields.
func (m *Mongo) FieldNames(ctx context.Context, job string) ([]string, error) {
	cur, err := m.items.Find(ctx, bson.D{{Key: "job", Value: job}},
		options.Find().SetProjection(bson.D{{Key: "fields", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("find fields of %s: %w", job, err)
	}
	defer cur.Close(ctx)
	seen := map[string]bool{}
	for cur.Next(ctx) {
		var doc struct {
			Fields bson.Raw `bson:"fields"`
		}
		if err := cur.Decode(&doc); err != nil {
			return nil, fmt.Errorf("decode fields: %w", err)
		}
		if len(doc.Fields) == 0 {
			continue
		}
		elems, err := doc.Fields.Elements()
		if err != nil {
			return nil, fmt.Errorf("decode fields: %w", err)
		}
		for _, e := range elems {
			seen[e.Key()] = true
		}
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("read fields of %s: %w", job, err)
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// JobExists tells whether MongoDB holds anything of the job: an item or a
// failure record. A job that stored nothing yet is not known here.
func (m *Mongo) JobExists(ctx context.Context, job string) (bool, error) {
	for _, c := range []*mongo.Collection{m.items, m.failed} {
		err := c.FindOne(ctx, bson.D{{Key: "job", Value: job}},
			options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, mongo.ErrNoDocuments) {
			return false, fmt.Errorf("find %s of %s: %w", c.Name(), job, err)
		}
	}
	return false, nil
}

// plainFields turns BSON arrays back into []string for JSON output.
func plainFields(f map[string]any) map[string]any {
	for k, v := range f {
		if arr, ok := v.(bson.A); ok {
			out := make([]string, 0, len(arr))
			for _, e := range arr {
				out = append(out, fmt.Sprint(e))
			}
			f[k] = out
		}
	}
	return f
}
