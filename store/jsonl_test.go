package store

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: line %q is not JSON: %v", path, l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestJSONL_SaveItem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	if err := os.WriteFile(path, []byte("stale line from an earlier run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenJSONL(path)
	if err != nil {
		t.Fatalf("OpenJSONL: %v", err)
	}
	ctx := context.Background()
	items := []Item{
		{ID: "news:1", URL: "https://example.com/1", Job: "news", Fields: map[string]any{"title": "one", "tags": []string{"a"}}, Status: 200},
		{ID: "news:2", URL: "https://example.com/2", Job: "news", Fields: map[string]any{"title": "two"}, Status: 200},
		{ID: "news:1", URL: "https://example.com/1", Job: "news", Fields: map[string]any{"title": "one again"}, Status: 200},
	}
	for _, it := range items {
		if err := s.SaveItem(ctx, it); err != nil {
			t.Fatalf("SaveItem(%s): %v", it.ID, err)
		}
	}
	if n, f := s.Counts(); n != 2 || f != 0 {
		t.Errorf("Counts = %d, %d; want 2, 0", n, f)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	lines := readLines(t, path)
	if len(lines) != 2 {
		t.Fatalf("%s has %d lines, want 2: %v", path, len(lines), lines)
	}
	if lines[0]["url"] != "https://example.com/1" || lines[1]["url"] != "https://example.com/2" {
		t.Errorf("urls = %v, %v; want .../1, .../2 in write order", lines[0]["url"], lines[1]["url"])
	}
	if want := map[string]any{"title": "one", "tags": []any{"a"}}; !reflect.DeepEqual(lines[0]["fields"], want) {
		t.Errorf("first item fields = %v, want %v (the first write; a redelivery is not written again)", lines[0]["fields"], want)
	}
	if _, ok := lines[0]["_id"]; ok {
		t.Errorf("line carries _id: %v", lines[0])
	}
	if _, err := os.Stat(FailuresPath(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("empty failures file %s: stat = %v, want it removed", FailuresPath(path), err)
	}
}

func TestJSONL_SaveFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	s, err := OpenJSONL(path)
	if err != nil {
		t.Fatalf("OpenJSONL: %v", err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ { // concurrent writers of the same pages
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.SaveFailure(ctx, Failure{ID: "news:gone", URL: "https://example.com/gone", Job: "news", Kind: KindDetail, Reason: "http status 404", Status: 404})
			_ = s.SaveItem(ctx, Item{ID: "news:ok", URL: "https://example.com/ok", Job: "news"})
		}()
	}
	wg.Wait()
	if err := s.SaveFailure(ctx, Failure{ID: "news:slow", URL: "https://example.com/slow", Job: "news", Reason: "timeout", Transient: true}); err != nil {
		t.Fatal(err)
	}
	if n, f := s.Counts(); n != 1 || f != 2 {
		t.Errorf("Counts = %d, %d; want 1, 2", n, f)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	fails := readLines(t, filepath.Join(filepath.Dir(path), "out.failed.jsonl"))
	if len(fails) != 2 || fails[0]["url"] != "https://example.com/gone" || fails[0]["status"] != 404.0 ||
		fails[0]["reason"] != "http status 404" || fails[1]["transient"] != true {
		t.Errorf("failures = %v; want gone (404) then slow (transient)", fails)
	}
	if items := readLines(t, path); len(items) != 1 {
		t.Errorf("items = %v, want 1 line", items)
	}
}

func TestFailuresPath(t *testing.T) {
	for in, want := range map[string]string{
		"items.jsonl":         "items.failed.jsonl",
		"/tmp/out/news.jsonl": "/tmp/out/news.failed.jsonl",
		"results":             "results.failed.jsonl",
		"a.jsonl.bak":         "a.jsonl.bak.failed.jsonl",
	} {
		if got := FailuresPath(in); got != want {
			t.Errorf("FailuresPath(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestOpenJSONL_errors(t *testing.T) {
	_, err := OpenJSONL(filepath.Join(t.TempDir(), "missing-dir", "items.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "missing-dir") {
		t.Errorf("OpenJSONL(missing dir) = %v, want an error naming the path", err)
	}
}
