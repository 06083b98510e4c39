package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"
)

// fileVisits is what a File knows of its pages between visits, learned on
// first use from the JSON Lines it holds (the last record of a page is its
// current one) and kept up to date by SaveVisits. A CSV file has no column
// for validators or hashes, and stdout cannot be read back: they start
// with nothing known.
type fileVisits struct {
	once  sync.Once
	err   error
	mu    sync.Mutex
	state map[string]Stored
}

// jsonlPath is the JSON Lines file the items are in, or "" for none.
func (s *File) jsonlPath() string {
	switch {
	case s.path == Stdout:
		return ""
	case s.spool != "":
		return s.spool
	}
	if f, err := FormatOf(s.path); err != nil || f != FormatJSONL {
		return ""
	}
	return s.path
}

// load reads the items file once.
func (s *File) load() (*fileVisits, error) {
	v := &s.visits
	v.once.Do(func() {
		v.state = map[string]Stored{}
		path := s.jsonlPath()
		if path == "" {
			return
		}
		v.err = readStored(path, v.state)
	})
	return v, v.err
}

// readStored reads the last record of each page in a JSON Lines file.
func readStored(path string, into map[string]Stored) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read validators: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var it Item
		if json.Unmarshal(sc.Bytes(), &it) == nil && it.ID != "" {
			into[it.ID] = storedOf(it)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read validators from %s: %w", path, err)
	}
	return nil
}

// Validators returns what the file holds of the pages ids (see
// Mongo.Validators), from memory: the file is read once, on first use.
func (s *File) Validators(_ context.Context, ids []string) (map[string]Stored, error) {
	v, err := s.load()
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]Stored, len(ids))
	for _, id := range ids {
		if st, ok := v.state[id]; ok {
			out[id] = st
		}
	}
	return out, nil
}

// SaveVisits records visits and says what each found (see Mongo.SaveVisits).
// A new or changed page appends its record (once per round, as SaveItem);
// an unchanged or not-modified one appends nothing, so its last record
// keeps the checked_at of the visit that wrote it: an append-only file
// rewrites nothing.
func (s *File) SaveVisits(ctx context.Context, now time.Time, visits []Visit) []VisitResult {
	res := make([]VisitResult, len(visits))
	v, err := s.load()
	if err != nil {
		for i := range res {
			res[i].Err = err
		}
		return res
	}
	// Every record goes into the batch being filled, then all are waited
	// for: one write and fsync for the lot, and no goroutine per record.
	batches := make([]*commit, len(visits))
	written := make([]Item, len(visits))
	for i, visit := range visits {
		v.mu.Lock()
		var prev *Stored
		if p, ok := v.state[visit.Item.ID]; ok {
			prev = &p
		}
		it, change, w := plan(prev, visit, now)
		v.mu.Unlock()
		res[i].Change, res[i].Version = change, versionAfter(it, prev)
		if w == writeTouch {
			s.remember(it, prev)
			continue
		}
		batches[i], res[i].Err = s.enqueueItem(it)
		written[i] = it
	}
	for i, c := range batches {
		if c == nil {
			continue
		}
		if res[i].Err = c.wait(ctx); res[i].Err == nil {
			s.remember(written[i], nil)
		}
	}
	return res
}

// remember keeps what was recorded of it; for a page only checked (prev
// not nil), the new validators the site sent and its next check (kept in
// memory: an append-only file holds the schedule of the page's last
// record, which a process started anew reads).
func (s *File) remember(it Item, prev *Stored) {
	st := storedOf(it)
	if prev != nil {
		st = *prev
		if it.ETag != "" {
			st.ETag = it.ETag
		}
		if it.LastModified != "" {
			st.LastModified = it.LastModified
		}
		if !it.NextCheckAt.IsZero() {
			st.CheckEvery, st.NextCheckAt = it.CheckEvery, it.NextCheckAt
		}
	}
	s.visits.mu.Lock()
	s.visits.state[it.ID] = st
	s.visits.mu.Unlock()
}
