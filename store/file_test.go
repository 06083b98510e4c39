package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func openTestFile(t *testing.T, path string, fields ...string) *File {
	t.Helper()
	s, err := OpenFile(path, fields)
	if err != nil {
		t.Fatalf("OpenFile(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func saveAll(t *testing.T, s *File, items ...Item) {
	t.Helper()
	for _, it := range items {
		if err := s.SaveItem(context.Background(), it); err != nil {
			t.Fatalf("SaveItem(%s): %v", it.ID, err)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOpenFile_unknownExtension(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.txt")
	if _, err := OpenFile(path, nil); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("OpenFile(.txt) = %v, want ErrUnknownFormat", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenFile(.txt) made the file: %v", err)
	}
}

// TestFile_CSV: rows are appended durably, one per page; a reopen adds no
// second header and no second row of a page.
func TestFile_CSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.csv")
	items := sampleItems()
	items[0].Kind = "product"
	s := openTestFile(t, path, "title", "tags", "body")
	saveAll(t, s, items[0], items[0])
	header := "url,job,fetched_at,status,round,kind,body,tags,title\n"
	row0 := "https://example.com/a,news,2025-01-02T03:04:05.0000006Z,200,0,product,\"line one\nline two\",x | y,\"Say \"\"hi\"\", world\"\n"
	if got := readFile(t, path); got != header+row0 {
		t.Errorf("before Close:\n%q\nwant\n%q", got, header+row0)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestFile(t, path, "body", "title", "tags")
	saveAll(t, s, items[1], items[0])
	row1 := "\"https://example.com/b?q=1,2\",news,2025-01-02T03:04:05.0000006Z,200,2,,,only,B\n"
	if got := readFile(t, path); got != header+row0+row1 {
		t.Errorf("after reopen:\n%q\nwant\n%q", got, header+row0+row1)
	}
	if n, _ := s.Counts(); n != 2 {
		t.Errorf("Counts = %d, want 2", n)
	}
}

// TestFile_CSVWithoutKind: a CSV file written before the kind column is
// appended to in its own columns.
func TestFile_CSVWithoutKind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.csv")
	old := "url,job,fetched_at,status,round,body\nhttps://example.com/a,news,,200,1,plain\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	s := openTestFile(t, path, "body")
	it := sampleItems()[1]
	it.Kind, it.Fields = "product", map[string]any{"body": "B"}
	saveAll(t, s, it)
	want := old + "\"https://example.com/b?q=1,2\",news,2025-01-02T03:04:05.0000006Z,200,2,B\n"
	if got := readFile(t, path); got != want {
		t.Errorf("after append:\n%q\nwant\n%q", got, want)
	}
}

// TestFile_CSVTornTail: a row cut short is cut off on reopen, even when it
// was cut inside a quoted field just after a newline.
func TestFile_CSVTornTail(t *testing.T) {
	header := "url,job,fetched_at,status,round,body\n"
	row := "https://example.com/a,news,,200,1,plain\n"
	for name, tail := range map[string]string{
		"no newline":            "https://example.com/b,news,,200,1,pla",
		"inside a quoted field": "https://example.com/b,news,,200,1,\"line one\n",
		"too few columns":       "https://example.com/b,news\n",
		"header only, torn":     "",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "items.csv")
			content := header + row + tail
			want := header + row
			if name == "header only, torn" { // a new file: today's columns
				content, want = header[:10], "url,job,fetched_at,status,round,kind,body\n"
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			s := openTestFile(t, path, "body")
			if got := readFile(t, path); got != want {
				t.Errorf("after open: %q, want %q", got, want)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("round not a number", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "items.csv")
		bad := "https://example.com/b,news,,200,x,plain\n"
		if err := os.WriteFile(path, []byte(header+bad+row), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenFile(path, []string{"body"}); err == nil || !strings.Contains(err.Error(), "round") {
			t.Errorf("OpenFile(a row whose round is not a number) = %v, want an error about the round", err)
		}
	})
	t.Run("other columns", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "items.csv")
		if err := os.WriteFile(path, []byte(header+row), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenFile(path, []string{"title"}); err == nil || !strings.Contains(err.Error(), "columns") {
			t.Errorf("OpenFile(other fields) = %v, want an error about the columns", err)
		}
	})
}

// TestFile_JSON: items go to a spool until Close writes the array; a
// crash leaves the spool, which the next open continues; a reopen after a
// clean Close appends to the array.
func TestFile_JSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.json")
	spool := path + ".partial.jsonl"
	items := sampleItems()
	s := openTestFile(t, path)
	saveAll(t, s, items[0])
	if got := readLines(t, spool); len(got) != 1 {
		t.Errorf("spool before Close holds %d lines, want 1", len(got))
	}
	crash(t, s) // no Close: the array is not written
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("array written without Close: %v", err)
	}

	s = openTestFile(t, path)
	saveAll(t, s, items[0], items[1])
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkArray(t, path, "https://example.com/a", "https://example.com/b?q=1,2")
	if _, err := os.Stat(spool); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("spool left after Close: %v", err)
	}

	s = openTestFile(t, path)
	third := items[1]
	third.ID, third.Fingerprint, third.URL = "news:c", "c", "https://example.com/c"
	saveAll(t, s, items[1], third)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkArray(t, path, "https://example.com/a", "https://example.com/b?q=1,2", "https://example.com/c")
}

func TestFile_JSONNotArray(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.json")
	if err := os.WriteFile(path, []byte(`{"not": "an array"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(path, nil); err == nil || !strings.Contains(err.Error(), "not a JSON array") {
		t.Errorf("OpenFile(object) = %v, want an error saying it is not an array", err)
	}
}

func checkArray(t *testing.T, path string, urls ...string) {
	t.Helper()
	var got []Item
	if err := json.Unmarshal([]byte(readFile(t, path)), &got); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var gotURLs []string
	for _, it := range got {
		gotURLs = append(gotURLs, it.URL)
	}
	if strings.Join(gotURLs, " ") != strings.Join(urls, " ") {
		t.Errorf("%s holds %q, want %q", path, gotURLs, urls)
	}
}

// crash drops s as a killed process would once its saves returned: the
// files are closed (dropping their locks) but nothing else runs.
func crash(t *testing.T, s *File) {
	t.Helper()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if err := s.items.close(); err != nil {
		t.Fatal(err)
	}
	if s.failures != nil {
		if err := s.failures.close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFile_stdout: "-" streams JSON Lines to stdout; failures go to
// failed.jsonl.
func TestFile_stdout(t *testing.T) {
	t.Chdir(t.TempDir())
	var out bytes.Buffer
	s, err := openFile(Stdout, FormatJSONL, nil, &out)
	if err != nil {
		t.Fatal(err)
	}
	items := sampleItems()
	saveAll(t, s, items[0], items[1], items[0])
	if n := strings.Count(out.String(), "\n"); n != 2 {
		t.Errorf("stdout holds %d lines before Close, want 2: %q", n, out.String())
	}
	if err := s.SaveFailure(context.Background(), Failure{ID: "news:z", URL: "https://example.com/z", Job: "news", Reason: "gone"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fails := readLines(t, "failed.jsonl"); len(fails) != 1 {
		t.Errorf("failed.jsonl holds %v, want 1 line", fails)
	}
}
