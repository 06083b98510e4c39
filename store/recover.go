package store

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// What a reopened file holds. Every record whose caller got nil was written
// and fsynced whole, so the file is a run of complete records, possibly
// followed by the start of a batch that a kill -9 or a crash cut short (a
// torn tail: no final newline, or a last record that does not parse). The
// callers of that batch never got nil, so their tasks were never
// acknowledged and will be delivered again: the torn tail is cut off, and
// the redelivery writes the record whole. A bad record with good ones after
// it is not a torn write; opening fails rather than guess.

// contents is what scanning a file found: the keys of its records, how
// many records, and the length of the prefix to keep.
type contents struct {
	keys  map[string]struct{}
	count int
	valid int64
}

func (c *contents) add(key string, end int64) {
	c.count++
	if key != "" {
		c.keys[key] = struct{}{}
	}
	c.valid = end
}

// recordKey is a record's identity in a file, made from its page
// ("<job>:<fingerprint>", or a CSV row's job and URL) and crawl round: a
// record whose key the file holds already is not written again.
type recordKey func(page string, round int64) string

// failureKey knows a failure by its page: a page fails once per job.
func failureKey(page string, _ int64) string { return page }

// itemKey knows an item by its page and round: a redelivered task (the
// same round) makes no second record, a re-crawl (a later round) does.
func itemKey(page string, round int64) string { return page + "@" + strconv.FormatInt(round, 10) }

// lineKey is the key of an item or failure line, or "" for a line that
// carries no fingerprint (written by an older version; kept, but not known
// by key).
func lineKey(line []byte, key recordKey) (string, error) {
	var v struct {
		Job         string `json:"job"`
		Fingerprint string `json:"fingerprint"`
		Round       int64  `json:"round"`
	}
	if err := json.Unmarshal(line, &v); err != nil {
		return "", err
	}
	if v.Job == "" || v.Fingerprint == "" {
		return "", nil
	}
	return key(ItemID(v.Job, v.Fingerprint), v.Round), nil
}

// scanJSONL reads JSON Lines; each line's key is lineKey's.
func scanJSONL(r io.Reader, name string, key recordKey) (contents, error) {
	c := contents{keys: map[string]struct{}{}}
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			return c, nil // a line without its newline is a torn tail
		}
		if err != nil {
			return contents{}, fmt.Errorf("read %s: %w", name, err)
		}
		end := c.valid + int64(len(line))
		if len(bytes.TrimSpace(line)) == 0 {
			c.valid = end
			continue
		}
		k, err := lineKey(line, key)
		if err != nil {
			if _, peek := br.Peek(1); peek == io.EOF {
				return c, nil // the last line is torn
			}
			return contents{}, fmt.Errorf("%s line %d is not a JSON object (%v); move the file away or fix it", name, lineNo, err)
		}
		c.add(k, end)
	}
}

// csvKey is the key of a CSV row: a CSV file has no fingerprint column, so
// a page is known by its job and URL (the canonical URL the fingerprint is
// made from), and its round column.
func csvKey(job, url string, round int64) string { return itemKey(ItemID(job, url), round) }

// scanCSV reads a CSV file of size bytes whose first record must be header.
// A file that is empty, or holds only a torn header, has valid 0.
func scanCSV(f io.ReaderAt, size int64, name string, header []string) (contents, error) {
	c := contents{keys: map[string]struct{}{}}
	r := csv.NewReader(bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 64<<10))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	for row := 0; ; row++ {
		start := r.InputOffset()
		rec, err := r.Read()
		if err == io.EOF {
			return c, nil
		}
		end := r.InputOffset()
		ok := err == nil && (row == 0 || len(rec) == len(header)) && (end < size || csvTerminated(f, start, end))
		switch {
		case !ok && end >= size:
			return c, nil // the last record is torn
		case !ok:
			return contents{}, fmt.Errorf("%s record %d is not a CSV row of %d columns (%v); move the file away or fix it", name, row+1, len(header), err)
		case row == 0 && !slices.Equal(rec, header):
			return contents{}, fmt.Errorf("%s has columns %q, want %q (another job's fields?); write to another file", name, rec, header)
		case row == 0:
			c.valid = end
		default:
			round, err := strconv.ParseInt(rec[csvRoundColumn], 10, 64)
			if err != nil {
				return contents{}, fmt.Errorf("%s record %d: round %q is not a number; move the file away or fix it", name, row+1, rec[csvRoundColumn])
			}
			c.add(csvKey(rec[1], rec[0], round), end)
		}
	}
}

// csvTerminated tells whether the record at f[start:end] ends with a
// newline outside quotes. A record cut inside a quoted field that holds a
// newline ends in '\n' too, but with an odd number of quotes (the writer
// doubles quotes inside fields).
func csvTerminated(f io.ReaderAt, start, end int64) bool {
	b := make([]byte, end-start)
	if _, err := f.ReadAt(b, start); err != nil {
		return false
	}
	return len(b) > 0 && b[len(b)-1] == '\n' && bytes.Count(b, []byte{'"'})%2 == 0
}

// openAppend opens path for appending, creating it if need be, and locks
// it against other processes: two writers would interleave their batches,
// and one's repair could cut the other's write. It returns the file and
// its size.
func openAppend(path string) (*os.File, int64, error) {
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, 0, fmt.Errorf("open %s: %w", path, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("lock %s: %w", path, err)
	}
	if created {
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, 0, err
		}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("stat %s: %w", path, err)
	}
	return f, st.Size(), nil
}

// cutTail truncates f to valid bytes when it is longer (the torn tail).
func cutTail(f *os.File, size, valid int64) error {
	if valid == size {
		return nil
	}
	if err := f.Truncate(valid); err != nil {
		return fmt.Errorf("cut torn tail of %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	return nil
}

// syncDir fsyncs a directory, so that a file created or renamed in it
// survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}
