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
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("%s does not end with a newline: %q", path, b)
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

func newsItem(fp, title string) Item {
	return Item{ID: ItemID("news", fp), URL: "https://example.com/" + fp, Job: "news", Fingerprint: fp,
		Fields: map[string]any{"title": title}, Status: 200}
}

func openJSONL(t *testing.T, path string) *JSONL {
	t.Helper()
	s, err := OpenJSONL(path)
	if err != nil {
		t.Fatalf("OpenJSONL(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestJSONL_SaveItem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	s := openJSONL(t, path)
	ctx := context.Background()
	first := newsItem("1", "one")
	first.Fields["tags"] = []string{"a"}
	for _, it := range []Item{first, newsItem("2", "two"), newsItem("1", "one again")} {
		if err := s.SaveItem(ctx, it); err != nil {
			t.Fatalf("SaveItem(%s): %v", it.ID, err)
		}
	}
	if n, f := s.Counts(); n != 2 || f != 0 {
		t.Errorf("Counts = %d, %d; want 2, 0", n, f)
	}
	lines := readLines(t, path) // before Close: nil means written
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
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(FailuresPath(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("failures file %s: stat = %v, want none made when nothing failed", FailuresPath(path), err)
	}
}

func TestJSONL_SaveItem_badID(t *testing.T) {
	s := openJSONL(t, filepath.Join(t.TempDir(), "items.jsonl"))
	it := newsItem("1", "one")
	it.ID = "news:other"
	if err := s.SaveItem(context.Background(), it); err == nil || !strings.Contains(err.Error(), "news:other") {
		t.Errorf("SaveItem(ID not job:fingerprint) = %v, want an error naming the ID", err)
	}
	bad := Failure{ID: "nojob", URL: "https://example.com/x", Job: "news"}
	if err := s.SaveFailure(context.Background(), bad); err == nil {
		t.Error("SaveFailure(ID not job:fingerprint) = nil, want an error")
	}
}

func TestJSONL_SaveFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	s := openJSONL(t, path)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ { // concurrent writers of the same pages
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.SaveFailure(ctx, Failure{ID: "news:gone", URL: "https://example.com/gone", Job: "news", Kind: KindDetail, Reason: "http status 404", Status: 404})
			_ = s.SaveItem(ctx, newsItem("ok", "ok"))
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
		fails[0]["reason"] != "http status 404" || fails[0]["fingerprint"] != "gone" || fails[1]["transient"] != true {
		t.Errorf("failures = %v; want gone (404, fingerprint gone) then slow (transient)", fails)
	}
	if items := readLines(t, path); len(items) != 1 {
		t.Errorf("items = %v, want 1 line", items)
	}
}

// TestJSONL_reopen: a restarted slave opens its file again: the lines stay,
// a redelivered page is not written twice, new pages are appended.
func TestJSONL_reopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	ctx := context.Background()
	s := openJSONL(t, path)
	for _, it := range []Item{newsItem("1", "one"), newsItem("2", "two")} {
		if err := s.SaveItem(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveFailure(ctx, Failure{ID: "news:3", URL: "https://example.com/3", Job: "news", Reason: "gone"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openJSONL(t, path)
	if n, f := s.Counts(); n != 2 || f != 1 {
		t.Errorf("Counts after reopen = %d, %d; want 2, 1 (what the files hold)", n, f)
	}
	for _, it := range []Item{newsItem("2", "two again"), newsItem("4", "four")} {
		if err := s.SaveItem(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveFailure(ctx, Failure{ID: "news:3", URL: "https://example.com/3", Job: "news", Reason: "gone again"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var urls []any
	for _, l := range readLines(t, path) {
		urls = append(urls, l["url"])
	}
	if want := []any{"https://example.com/1", "https://example.com/2", "https://example.com/4"}; !reflect.DeepEqual(urls, want) {
		t.Errorf("lines after reopen = %v, want %v", urls, want)
	}
	if fails := readLines(t, FailuresPath(path)); len(fails) != 1 || fails[0]["reason"] != "gone" {
		t.Errorf("failures after reopen = %v, want the first record of page 3 only", fails)
	}
}

// TestJSONL_tornTail: a kill -9 mid-batch leaves a cut line. Its caller
// never got nil, so its task was never acknowledged: reopening cuts it off,
// and the redelivery writes the page whole.
func TestJSONL_tornTail(t *testing.T) {
	ctx := context.Background()
	whole := `{"url":"https://example.com/1","job":"news","fingerprint":"1","fields":{}}` + "\n"
	three := `{"url":"https://example.com/3","job":"news","fingerprint":"3","fields":{}}` + "\n"
	for name, tc := range map[string]struct {
		tail string
		want []any // URLs after pages 1 and 2 are saved again
	}{
		"cut mid-JSON":           {`{"url":"https://example.com/2","job":"ne`, []any{"https://example.com/1", "https://example.com/2"}},
		"cut before the newline": {three[:len(three)-1], []any{"https://example.com/1", "https://example.com/2"}},
		"last line is not JSON":  {"{\"url\":\"https://exa\x00\x00\n", []any{"https://example.com/1", "https://example.com/2"}},
		"a batch cut after a whole line": {three + `{"url":"https://example.com/2"`,
			[]any{"https://example.com/1", "https://example.com/3", "https://example.com/2"}},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "items.jsonl")
			if err := os.WriteFile(path, []byte(whole+tc.tail), 0o644); err != nil {
				t.Fatal(err)
			}
			s := openJSONL(t, path)
			if n, _ := s.Counts(); n != len(tc.want)-1 {
				t.Errorf("Counts = %d, want %d", n, len(tc.want)-1)
			}
			for _, fp := range []string{"1", "2"} {
				if err := s.SaveItem(ctx, newsItem(fp, "again")); err != nil {
					t.Fatal(err)
				}
			}
			var urls []any
			for _, l := range readLines(t, path) {
				urls = append(urls, l["url"])
			}
			if !reflect.DeepEqual(urls, tc.want) {
				t.Errorf("lines = %v; want %v (the torn line cut, page 2 written whole)", urls, tc.want)
			}
		})
	}
}

// TestJSONL_corrupt: a bad line with good lines after it is not a torn
// write; opening fails, naming the file and line, and leaves it alone.
func TestJSONL_corrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	content := `{"job":"news","fingerprint":"1"}` + "\nnot json\n" + `{"job":"news","fingerprint":"2"}` + "\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenJSONL(path); err == nil || !strings.Contains(err.Error(), path+" line 2") {
		t.Errorf("OpenJSONL(corrupt) = %v, want an error naming %s line 2", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Errorf("file changed to %q", b)
	}
}

// TestJSONL_locked: two processes appending to one file would interleave
// batches; the second open fails until the first closes.
func TestJSONL_locked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	s := openJSONL(t, path)
	if _, err := OpenJSONL(path); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second OpenJSONL = %v, want an error saying the file is in use", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	openJSONL(t, path)
}

func TestJSONL_closed(t *testing.T) {
	s := openJSONL(t, filepath.Join(t.TempDir(), "items.jsonl"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveItem(context.Background(), newsItem("1", "late")); !errors.Is(err, ErrClosed) {
		t.Errorf("SaveItem after Close = %v, want ErrClosed", err)
	}
	if err := s.SaveFailure(context.Background(), Failure{ID: "news:1", Job: "news"}); !errors.Is(err, ErrClosed) {
		t.Errorf("SaveFailure after Close = %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}

func TestFailuresPath(t *testing.T) {
	for in, want := range map[string]string{
		"items.jsonl":         "items.failed.jsonl",
		"/tmp/out/news.jsonl": "/tmp/out/news.failed.jsonl",
		"items.csv":           "items.failed.jsonl",
		"items.JSON":          "items.failed.jsonl",
		"results":             "results.failed.jsonl",
		"a.jsonl.bak":         "a.jsonl.bak.failed.jsonl",
		"-":                   "failed.jsonl",
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
