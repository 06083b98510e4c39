package sink

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/internal/bytesize"
	"github.com/crawler-dev/crawler/store"
)

// DefaultWARCMaxSize is the size past which a WARC file is closed and the
// next one begun, unless ?max_size= says otherwise.
const DefaultWARCMaxSize = 1 << 30

// openSuffix marks a WARC file being written; it is dropped when the
// file is complete (rotated, or the sink closed).
const openSuffix = ".open"

// WARC archives each fetched page as a WARC 1.1 request and response
// record (gzip per record) in files of a directory, rotated at a size.
type WARC struct {
	dir     string
	maxSize int64
	log     *zap.Logger

	mu     sync.Mutex
	file   *os.File // nil until the first record, and after a rotation
	path   string   // the file being written, with openSuffix
	size   int64    // bytes in it, whole records only
	infoID string   // its warcinfo record's ID
	seq    int      // files begun by this sink
	closed bool
	// completed, when set, is told each file completed (its final path).
	completed func(path string)
}

// warcOptions reads a warc: URI: its directory and ?max_size=.
func warcOptions(s Spec) (dir string, maxSize int64, err error) {
	dir = s.URL.Opaque
	if dir == "" {
		dir = s.URL.Path
	}
	if dir == "" {
		return "", 0, errors.New("warc: no directory; write warc:DIR (warc:archive, warc:/var/crawl/warc)")
	}
	if dec, err := url.PathUnescape(dir); err == nil {
		dir = dec
	}
	maxSize = DefaultWARCMaxSize
	for k, v := range s.URL.Query() {
		if k != "max_size" {
			return "", 0, fmt.Errorf("warc: unknown option %q (known: max_size)", k)
		}
		n, err := bytesize.Parse(v[0])
		if err != nil || n < 1<<10 {
			return "", 0, fmt.Errorf("warc: ?max_size=%s: not a size of at least 1KiB (e.g. 1GiB, 512MiB)", v[0])
		}
		maxSize = n
	}
	return dir, maxSize, nil
}

// checkWARC checks a warc: URI.
func checkWARC(s Spec) error {
	_, _, err := warcOptions(s)
	return err
}

// openWARC opens the warc:DIR sink: the directory is made when missing.
func openWARC(_ context.Context, s Spec, log *zap.Logger) (Sink, error) {
	dir, maxSize, err := warcOptions(s)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	return &WARC{dir: dir, maxSize: maxSize, log: log}, nil
}

// KeepsExchanges is true: a WARC archives what went over the wire.
func (w *WARC) KeepsExchanges() bool { return true }

// Put appends a request and a response record for each record that
// carries its exchange, and fsyncs them. A record without one (a 304, a
// rendered page) has nothing to archive and is taken as it is. If the
// write fails (the disk is full), the file is cut back to its last whole
// record and every record of the batch gets the error, to be sent again.
func (w *WARC) Put(_ context.Context, recs []Record) []error {
	errs := make([]error, len(recs))
	batch := getBuffer()
	defer putBuffer(batch)
	for _, r := range recs {
		if r.Exchange != nil && !r.NotModified {
			appendExchange(batch, r.Exchange, time.Now().UTC())
		}
	}
	if batch.Len() == 0 {
		return errs
	}
	if err := w.write(batch.Bytes()); err != nil {
		for i := range errs {
			errs[i] = err
		}
	}
	return errs
}

// write appends b (whole records) to the current file, begun or rotated
// first when needed, and fsyncs it.
func (w *WARC) write(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("warc %s: %w", w.dir, store.ErrClosed)
	}
	if w.file != nil && w.size+int64(len(b)) > w.maxSize && w.size > 0 {
		if err := w.finish(); err != nil {
			return err
		}
	}
	if w.file == nil {
		if err := w.begin(); err != nil {
			return err
		}
	}
	return w.append(b)
}

// append writes b and fsyncs; on failure the file is cut back to its
// whole records.
func (w *WARC) append(b []byte) error {
	_, err := w.file.Write(b)
	if err == nil {
		err = w.file.Sync()
	}
	if err != nil {
		if terr := w.file.Truncate(w.size); terr != nil {
			w.log.Error("cut a WARC file back to its last whole record", zap.String("file", w.path), zap.Error(terr))
			w.abandon()
		}
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	w.size += int64(len(b))
	return nil
}

// begin creates the next file and writes its warcinfo record.
func (w *WARC) begin() error {
	host, _ := os.Hostname()
	var name string
	for { // a name no complete file has (a sink opened again by this process within the second)
		w.seq++
		name = fmt.Sprintf("crawler-%s-%05d-%s-%d.warc.gz", time.Now().UTC().Format("20060102150405"), w.seq, safeName(host), os.Getpid())
		if _, err := os.Lstat(filepath.Join(w.dir, name)); err != nil {
			break // none there (or none to see: creating it says why)
		}
	}
	path := filepath.Join(w.dir, name+openSuffix)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	w.file, w.path, w.size = f, path, 0
	info := getBuffer()
	defer putBuffer(info)
	w.infoID = appendWarcinfo(info, name, host, time.Now().UTC())
	if err := w.append(info.Bytes()); err != nil {
		w.abandon()
		_ = os.Remove(path)
		return err
	}
	return nil
}

// finish closes the current file and drops its openSuffix.
func (w *WARC) finish() error {
	f, path := w.file, w.path
	w.file = nil
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	done := strings.TrimSuffix(path, openSuffix)
	if err := os.Rename(path, done); err != nil {
		return fmt.Errorf("complete %s: %w", path, err)
	}
	if w.completed != nil {
		w.completed(done)
	}
	return nil
}

// onComplete has f told of each file completed from now on, and of those
// the directory holds already: a copier (the s3:// sink) takes them.
func (w *WARC) onComplete(f func(path string)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.completed = f
	done, _ := filepath.Glob(filepath.Join(w.dir, "*.warc.gz")) // the pattern is well formed
	for _, path := range done {
		f(path)
	}
}

// abandon leaves a file that could not be cut back as it is (with its
// openSuffix): the next write begins another.
func (w *WARC) abandon() {
	_ = w.file.Close()
	w.file = nil
}

// PutFailure archives nothing: a WARC holds what was fetched.
func (w *WARC) PutFailure(context.Context, store.Failure) error { return nil }

// Close completes the current file.
func (w *WARC) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.file == nil {
		return nil
	}
	return w.finish()
}

// safeName keeps the letters, digits, dots and dashes of a host name.
func safeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
	if s == "" {
		return "host"
	}
	return s
}
