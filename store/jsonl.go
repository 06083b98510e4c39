package store

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
)

// JSONL writes items and failures to JSON Lines files, for `crawler run`
// without MongoDB. A page already written is not written again, so a
// redelivered task does not make a second line.
type JSONL struct {
	mu       sync.Mutex
	items    *jsonlFile
	failures *jsonlFile
}

type jsonlFile struct {
	path    string
	f       *os.File
	w       *bufio.Writer
	written map[string]bool
	count   int
}

// OpenJSONL creates (truncates) itemsPath, and writes failures beside it to
// FailuresPath(itemsPath).
func OpenJSONL(itemsPath string) (*JSONL, error) {
	items, err := createJSONL(itemsPath)
	if err != nil {
		return nil, err
	}
	failures, err := createJSONL(FailuresPath(itemsPath))
	if err != nil {
		items.f.Close()
		return nil, err
	}
	return &JSONL{items: items, failures: failures}, nil
}

// FailuresPath is where failures go beside an items file: items.jsonl ->
// items.failed.jsonl.
func FailuresPath(itemsPath string) string {
	return strings.TrimSuffix(itemsPath, ".jsonl") + ".failed.jsonl"
}

func createJSONL(path string) (*jsonlFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &jsonlFile{path: path, f: f, w: bufio.NewWriter(f), written: map[string]bool{}}, nil
}

func (j *jsonlFile) write(id string, v any) error {
	if j.written[id] {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", id, err)
	}
	b = append(b, '\n')
	if _, err := j.w.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", j.path, err)
	}
	j.written[id] = true
	j.count++
	return nil
}

// SaveItem appends it unless its page was written already.
func (s *JSONL) SaveItem(_ context.Context, it Item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.items.write(it.ID, it)
}

// SaveFailure appends f unless its page was written already.
func (s *JSONL) SaveFailure(_ context.Context, f Failure) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failures.write(f.ID, f)
}

// DeleteFailure cannot take a line back out of an append-only file: a page
// stored on retry keeps its earlier failure line. It always succeeds.
func (s *JSONL) DeleteFailure(context.Context, string) error { return nil }

// Counts returns how many items and failures were written.
func (s *JSONL) Counts() (items, failures int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.items.count, s.failures.count
}

// Close flushes and closes both files. An empty failures file is removed.
func (s *JSONL) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for _, j := range []*jsonlFile{s.items, s.failures} {
		if err := j.w.Flush(); err != nil && first == nil {
			first = fmt.Errorf("flush %s: %w", j.path, err)
		}
		if err := j.f.Close(); err != nil && first == nil {
			first = fmt.Errorf("close %s: %w", j.path, err)
		}
	}
	if s.failures.count == 0 {
		_ = os.Remove(s.failures.path)
	}
	return first
}
