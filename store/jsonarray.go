package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// spoolArray reads the JSON array at path, if there is one, into a new
// JSON Lines spool, one element a line. It writes a temporary file and
// renames it, so a crash leaves either no spool or a whole one.
func spoolArray(path, spool string) error {
	in, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer in.Close()
	return writeAtomic(spool, func(w *bufio.Writer) error {
		return arrayLines(in, path, w)
	})
}

// arrayLines copies the elements of the JSON array in r to w, one a line.
// An empty file is an empty array.
func arrayLines(r io.Reader, name string, w io.Writer) error {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err == io.EOF {
		return nil
	}
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '[' {
		return fmt.Errorf("%s is not a JSON array; move it away or write to another file", name)
	}
	var buf bytes.Buffer
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		buf.Reset()
		if err := json.Compact(&buf, raw); err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		buf.WriteByte('\n')
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	return nil
}

// renderJSON writes the items of the spool to path as one JSON array, one
// item a line, then removes the spool.
func renderJSON(spool, path string) error {
	in, err := os.Open(spool)
	if err != nil {
		return fmt.Errorf("open %s: %w", spool, err)
	}
	defer in.Close()
	err = writeAtomic(path, func(w *bufio.Writer) error {
		iw := &jsonArrayWriter{w: w}
		err := eachLine(in, spool, iw.writeRaw)
		if err != nil {
			return err
		}
		return iw.Close()
	})
	if err != nil {
		return err
	}
	if err := os.Remove(spool); err != nil {
		return fmt.Errorf("remove %s: %w", spool, err)
	}
	return nil
}

// eachLine calls fn with each whole, non-blank line of r, newline dropped.
func eachLine(r io.Reader, name string, fn func([]byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			return nil // a torn last line is not a record
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if err := fn(line); err != nil {
				return err
			}
		}
	}
}

// writeAtomic writes path through fill: to a temporary file beside it,
// fsynced, then renamed over path, with the directory fsynced.
func writeAtomic(path string, fill func(*bufio.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}
