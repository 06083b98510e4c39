package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
)

// File writes a crawl's items to a file in one Format and its failures to
// a JSON Lines file beside it (FailuresPath), for `crawler run` and for a
// master or slave given --output instead of MongoDB.
//
// When SaveItem or SaveFailure returns nil, the record is written and
// fsynced (group commit: concurrent callers share one write and one fsync),
// so a slave may acknowledge its task then and a kill -9 loses nothing.
// Opening an existing file appends to it and learns which pages it holds,
// and of which crawl round (Item.Round). A page holds one record per
// round: a redelivered task makes no second record (the first record of
// the round wins), while a re-crawl in a later round (recrawl_every, past
// the dupefilter's window) appends the new one, so a page's last record
// is its current one. A page fails once: its first failure record wins.
//
// Per format: JSON Lines and CSV are appended record by record. JSON (one
// array) cannot be appended to durably, so items go to a JSON Lines spool
// beside it (items.json.partial.jsonl) and Close writes the array from the
// spool (to a temporary file, renamed over the path) and removes the spool;
// after a crash the next Open continues the spool, and an existing array
// with no spool is read into a new spool first. On stdout ("-") items are
// JSON Lines, written at once but not fsynced.
type File struct {
	path   string
	encode func(*bytes.Buffer, Item) error // appends one record, newline included
	key    func(Item) (string, error)      // the page's identity in this file
	items  *lineFile
	spool  string // FormatJSON: where items go until Close renders path

	failPath string
	mu       sync.Mutex
	failures *lineFile // opened on the first failure unless the file exists
	closed   bool

	visits fileVisits // what SaveVisits compares with
}

// OpenFile opens path for a crawl's items, in the format its extension
// names (FormatOf), or stdout for "-". fields are the job's field names,
// the CSV columns. An existing file is appended to, never truncated; a
// torn last record (a write cut short by a crash) is cut off first. The
// file is locked: a second process opening it fails.
func OpenFile(path string, fields []string) (*File, error) {
	format, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	return openFile(path, format, fields, os.Stdout)
}

func openFile(path string, format Format, fields []string, stdout io.Writer) (*File, error) {
	s := &File{path: path, failPath: FailuresPath(path), encode: jsonRecord, key: jsonItemKey}
	var err error
	switch {
	case path == Stdout:
		s.items = newLineFile("stdout", stdout, nil, nil, 0)
	case format == FormatCSV:
		fixed := csvFixedOf(path, fields)
		s.encode, s.key = csvRecordTo(csvLineAfter(fixed, fields)), csvItemKey
		s.items, err = openCSVFile(path, csvColumnsAfter(fixed, fields))
	case format == FormatJSON:
		s.spool = path + ".partial.jsonl"
		s.items, err = openJSONSpool(path, s.spool)
	default:
		s.items, err = openJSONLFile(path, itemKey)
	}
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(s.failPath); err == nil {
		if s.failures, err = openJSONLFile(s.failPath, failureKey); err != nil {
			_ = s.items.close()
			return nil, err
		}
	}
	return s, nil
}

// jsonRecord appends it to buf as one JSON line: json.Marshal's bytes and
// a newline.
func jsonRecord(buf *bytes.Buffer, it Item) error {
	if b, ok := appendItemJSON(buf.AvailableBuffer(), it); ok {
		buf.Write(append(b, '\n'))
		return nil
	}
	return json.NewEncoder(buf).Encode(it)
}

// csvRecordTo is line as a File's encoder.
func csvRecordTo(line itemLine) func(*bytes.Buffer, Item) error {
	return func(buf *bytes.Buffer, it Item) error {
		b, err := line(it)
		buf.Write(b)
		return err
	}
}

// jsonItemKey is an item's ID, checked against the job and fingerprint
// that its line carries (a reopened file knows its pages by those), with
// its round.
func jsonItemKey(it Item) (string, error) {
	if it.ID != ItemID(it.Job, it.Fingerprint) {
		return "", fmt.Errorf("item %s: ID %q is not <job>:<fingerprint> (%q)", it.URL, it.ID, ItemID(it.Job, it.Fingerprint))
	}
	return itemKey(it.ID, it.Round), nil
}

func csvItemKey(it Item) (string, error) { return csvKey(it.Job, it.URL, it.Round), nil }

// SaveItem appends it unless its page is in the file already for its
// round, and returns once the record is written and fsynced (or ctx ends:
// then it may still be written, and a later SaveItem of the page in that
// round waits for it). The item's ID must be ItemID(Job, Fingerprint).
func (s *File) SaveItem(ctx context.Context, it Item) error {
	c, err := s.enqueueItem(it)
	if err != nil {
		return err
	}
	return c.wait(ctx)
}

// enqueueItem adds it to the batch the items file writes next (see
// lineFile.enqueue) and returns that batch. The record is encoded into a
// pooled buffer, copied into the batch.
func (s *File) enqueueItem(it Item) (*commit, error) {
	key, err := s.key(it)
	if err != nil {
		return nil, err
	}
	buf := getBuffer()
	defer putBuffer(buf)
	if err := s.encode(buf, it); err != nil {
		return nil, fmt.Errorf("encode item %s: %w", it.URL, err)
	}
	return s.items.enqueue(key, buf.Bytes())
}

// SaveFailure appends f unless its page has a failure record already, and
// returns once it is written and fsynced. f.ID must be
// ItemID(f.Job, fingerprint).
func (s *File) SaveFailure(ctx context.Context, f Failure) error {
	if f.Fingerprint() == "" {
		return fmt.Errorf("failure of %s: ID %q is not <job>:<fingerprint>", f.URL, f.ID)
	}
	rec, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode failure %s: %w", f.URL, err)
	}
	l, err := s.failureFile()
	if err != nil {
		return err
	}
	return l.append(ctx, f.ID, append(rec, '\n'))
}

// failureFile is the failures file, opened (created) on first use.
func (s *File) failureFile() (*lineFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("write %s: %w", s.failPath, ErrClosed)
	}
	if s.failures == nil {
		l, err := openJSONLFile(s.failPath, failureKey)
		if err != nil {
			return nil, err
		}
		s.failures = l
	}
	return s.failures, nil
}

// DeleteFailure cannot take a record back out of an append-only file: a
// page stored on retry keeps its earlier failure record. It always
// succeeds.
func (s *File) DeleteFailure(context.Context, string) error { return nil }

// Counts returns how many items and failures the files hold: the records
// found on open plus those written since.
func (s *File) Counts() (items, failures int) {
	s.mu.Lock()
	f := s.failures
	s.mu.Unlock()
	if f != nil {
		failures = f.records()
	}
	return s.items.records(), failures
}

// Close writes what is pending, fsyncs and closes the files; for JSON it
// then writes the array. Saves after Close fail with ErrClosed; a second
// Close does nothing.
func (s *File) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	failures := s.failures
	s.mu.Unlock()
	err := s.items.close()
	if failures != nil {
		err = errors.Join(err, failures.close())
	}
	if err == nil && s.spool != "" {
		err = renderJSON(s.spool, s.path)
	}
	return err
}

// csvFixedOf is the fixed columns to append to the CSV file at path in:
// csvFixed, or csvFixedWithoutKind when the file was written before the
// kind column, with these fields.
func csvFixedOf(path string, fields []string) []string {
	f, err := os.Open(path)
	if err != nil {
		return csvFixed
	}
	defer f.Close()
	header, err := csv.NewReader(bufio.NewReader(f)).Read()
	if err == nil && slices.Equal(header, csvColumnsAfter(csvFixedWithoutKind, fields)) {
		return csvFixedWithoutKind
	}
	return csvFixed
}

// openCSVFile opens a CSV file for appending: it checks the header, cuts
// a torn tail off, learns the pages there, and writes the header to a new
// file.
func openCSVFile(path string, header []string) (*lineFile, error) {
	f, size, err := openAppend(path)
	if err != nil {
		return nil, err
	}
	l, err := startCSV(f, size, header)
	if err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

func startCSV(f *os.File, size int64, header []string) (*lineFile, error) {
	c, err := scanCSV(f, size, f.Name(), header)
	if err != nil {
		return nil, err
	}
	if err := cutTail(f, size, c.valid); err != nil {
		return nil, err
	}
	if c.valid == 0 {
		rec, err := csvRecord(header)
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(rec); err != nil {
			return nil, fmt.Errorf("write %s: %w", f.Name(), err)
		}
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("fsync %s: %w", f.Name(), err)
		}
	}
	return newLineFile(f.Name(), f, f, c.keys, c.count), nil
}

// openJSONSpool opens the JSON Lines spool of a JSON array file. With no
// spool, the items of an existing array are read into a new one first.
func openJSONSpool(path, spool string) (*lineFile, error) {
	if _, err := os.Stat(spool); errors.Is(err, fs.ErrNotExist) {
		if err := spoolArray(path, spool); err != nil {
			return nil, err
		}
	}
	return openJSONLFile(spool, itemKey)
}
