package store_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
	"github.com/crawler-dev/crawler/store/storetest"
)

// The one store contract, over every store the slave and master write to.

func TestContract_Mongo(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		uri, reader := mongoStorage(t)
		return mongoBackend(reader, func(t *testing.T) storetest.Store { return openMongo(t, uri) })
	})
}

func TestContract_JSONL(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		path := filepath.Join(t.TempDir(), "items.jsonl")
		return fileBackend(path, func(t *testing.T) storetest.Store {
			s, err := store.OpenJSONL(path)
			if err != nil {
				t.Fatalf("OpenJSONL: %v", err)
			}
			return fileStore{s}
		}, jsonlItems)
	})
}

func TestContract_CSV(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		path := filepath.Join(t.TempDir(), "items.csv")
		return fileBackend(path, openFile(path, "title", "tags"), csvItems)
	})
}

func TestContract_JSON(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		path := filepath.Join(t.TempDir(), "items.json")
		return fileBackend(path, openFile(path), jsonItems)
	})
}

// mongoStore adapts *store.Mongo to storetest.Store.
type mongoStore struct{ *store.Mongo }

func openMongo(t *testing.T, uri string) mongoStore {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := store.OpenMongo(ctx, uri)
	if err != nil {
		t.Fatalf("OpenMongo: %v", err)
	}
	return mongoStore{m}
}

// mongoStorage is a database of the test's own, and a second connection
// to it that reads what the stores under test wrote.
func mongoStorage(t *testing.T) (string, *store.Mongo) {
	uri, _ := testenv.MongoDBURI(t)
	reader := openMongo(t, uri)
	t.Cleanup(func() { _ = reader.Close(context.Background()) })
	return uri, reader.Mongo
}

func mongoBackend(reader *store.Mongo, open func(t *testing.T) storetest.Store) storetest.Backend {
	return storetest.Backend{
		Open: open,
		Items: func(t *testing.T, job string) []store.Item {
			var buf bytes.Buffer
			if _, err := reader.ExportItems(context.Background(), job, &buf); err != nil {
				t.Fatalf("ExportItems: %v", err)
			}
			return jsonLines[store.Item](t, &buf)
		},
		Failures: func(t *testing.T, job string) []store.Failure {
			fs, err := reader.Failures(context.Background(), job)
			if err != nil {
				t.Fatalf("Failures: %v", err)
			}
			return fs
		},
	}
}

// fileStore adapts *store.File to storetest.Store.
type fileStore struct{ *store.File }

func (f fileStore) Close(context.Context) error { return f.File.Close() }

func openFile(path string, fields ...string) func(t *testing.T) storetest.Store {
	return func(t *testing.T) storetest.Store {
		s, err := store.OpenFile(path, fields)
		if err != nil {
			t.Fatalf("OpenFile(%s): %v", path, err)
		}
		return fileStore{s}
	}
}

// fileBackend reads the files as another process would, while the store
// is open.
func fileBackend(path string, open func(t *testing.T) storetest.Store, items func(t *testing.T, path string) []store.Item) storetest.Backend {
	return storetest.Backend{
		Open:       open,
		AppendOnly: true,
		Items:      func(t *testing.T, job string) []store.Item { return ofJob(items(t, path), job) },
		Failures: func(t *testing.T, job string) []store.Failure {
			var out []store.Failure
			for _, f := range jsonLines[store.Failure](t, readOrEmpty(t, store.FailuresPath(path))) {
				if f.Job == job {
					out = append(out, f)
				}
			}
			return out
		},
	}
}

func ofJob(items []store.Item, job string) []store.Item {
	var out []store.Item
	for _, it := range items {
		if it.Job == job {
			out = append(out, it)
		}
	}
	return out
}

func readOrEmpty(t *testing.T, path string) io.Reader {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

// jsonLines decodes every line of r, failing on one that does not parse.
func jsonLines[T any](t *testing.T, r io.Reader) []T {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("line %d %q: %v", i+1, line, err)
		}
		out = append(out, v)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("the file does not end with a newline: %q", tail(b))
	}
	return out
}

func tail(b []byte) []byte { return b[max(0, len(b)-80):] }

func jsonlItems(t *testing.T, path string) []store.Item {
	return jsonLines[store.Item](t, readOrEmpty(t, path))
}

// jsonItems reads the array once Close wrote it, the spool before.
func jsonItems(t *testing.T, path string) []store.Item {
	t.Helper()
	if _, err := os.Stat(path + ".partial.jsonl"); err == nil {
		return jsonlItems(t, path+".partial.jsonl")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var items []store.Item
	if err := json.Unmarshal(b, &items); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return items
}

// csvItems reads url, job, status, round and title back from a CSV file.
func csvItems(t *testing.T, path string) []store.Item {
	t.Helper()
	r := csv.NewReader(readOrEmpty(t, path))
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) == 0 {
		return nil
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	var items []store.Item
	for _, rec := range recs[1:] {
		status, _ := strconv.Atoi(rec[col["status"]])
		var round int64
		if i, ok := col["round"]; ok {
			round, _ = strconv.ParseInt(rec[i], 10, 64)
		}
		items = append(items, store.Item{URL: rec[col["url"]], Job: rec[col["job"]], Status: status, Round: round,
			Fields: map[string]any{"title": rec[col["title"]]}})
	}
	return items
}
