package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// ErrClosed is returned by a store's writes after its Close.
var ErrClosed = errors.New("store closed")

// lineFile appends records to a file with group commit. Callers add their
// record to a shared batch and wait; one writer goroutine writes the batch
// with one write and one fsync, then releases every caller of that batch.
// While it syncs, the next batch fills, so 32 concurrent savers share a few
// fsyncs instead of paying one each. A record is known by a key; a key
// already in the file (or in a batch on its way) is not written again.
type lineFile struct {
	name string    // path, for errors
	w    io.Writer // the file, or stdout
	f    *os.File  // nil when the writer is not ours to sync and close

	mu      sync.Mutex
	keys    map[string]*commit // key -> the batch that carries it
	pending *commit            // the batch filling now
	// spares are the buffers of batches written, for the next ones: two,
	// as one batch is written while the next fills, so that neither grows
	// from nothing (the batch buffers were 7% of a slave's allocation).
	spares [][]byte
	count  int   // records durably written, found on open included
	err    error // the first failed write or fsync: sticky
	closed bool

	kick   chan struct{} // a batch is pending (capacity 1)
	exited chan struct{} // closed when the writer goroutine returns
}

// commit is one batch: the records of several callers, written together.
type commit struct {
	buf  []byte
	n    int
	done chan struct{} // closed once buf is written and synced, or failed
	err  error
}

// durable is the batch of the records found in the file when it was
// opened: written long ago.
var durable = func() *commit {
	c := &commit{done: make(chan struct{})}
	close(c.done)
	return c
}()

// newLineFile starts the writer of a file that already holds the records
// keys (count records in all). f is nil when w is not a file to sync and
// close (stdout).
func newLineFile(name string, w io.Writer, f *os.File, keys map[string]struct{}, count int) *lineFile {
	l := &lineFile{name: name, w: w, f: f, keys: make(map[string]*commit, len(keys)), count: count,
		kick: make(chan struct{}, 1), exited: make(chan struct{})}
	for k := range keys {
		l.keys[k] = durable
	}
	go l.run()
	return l
}

// append adds line under key and returns once the batch carrying it is
// written and fsynced, or ctx ends. A key already written or on its way is
// not written again: append then waits for the batch that carries it, so
// nil always means the record is on disk.
func (l *lineFile) append(ctx context.Context, key string, line []byte) error {
	c, err := l.enqueue(key, line)
	if err != nil {
		return err
	}
	return c.wait(ctx)
}

// wait returns once c is written and fsynced (c's error, nil when it is
// on disk) or ctx ends (ctx's error).
func (c *commit) wait(ctx context.Context) error {
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// enqueue adds a copy of line under key to the pending batch, unless key
// is written or on its way already, and returns the batch that carries
// key.
func (l *lineFile) enqueue(key string, line []byte) (*commit, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, fmt.Errorf("write %s: %w", l.name, ErrClosed)
	}
	if l.err != nil {
		return nil, l.err
	}
	if c, ok := l.keys[key]; ok {
		return c, nil
	}
	if l.pending == nil {
		var buf []byte
		if n := len(l.spares); n > 0 {
			buf, l.spares = l.spares[n-1], l.spares[:n-1]
		}
		l.pending = &commit{buf: buf, done: make(chan struct{})}
	}
	c := l.pending
	c.buf = append(c.buf, line...)
	c.n++
	l.keys[key] = c
	select {
	case l.kick <- struct{}{}:
	default: // the writer has been told already
	}
	return c, nil
}

// run is the writer: it commits the pending batch each time it is kicked,
// and the last one when the kick channel is closed.
func (l *lineFile) run() {
	defer close(l.exited)
	for range l.kick {
		l.flush()
	}
	l.flush()
}

// flush writes and fsyncs the pending batch and releases its callers.
// After a failure nothing more is written: the file may end in a partial
// batch, and appending after it would bury it mid-file.
func (l *lineFile) flush() {
	l.mu.Lock()
	c := l.pending
	l.pending = nil
	failed := l.err
	l.mu.Unlock()
	if c == nil {
		return
	}
	c.err = failed
	if c.err == nil {
		c.err = l.write(c.buf)
	}
	buf := c.buf[:0]
	c.buf = nil
	l.mu.Lock()
	if cap(buf) <= maxSpareBatch && len(l.spares) < maxSpares {
		l.spares = append(l.spares, buf)
	}
	if c.err == nil {
		l.count += c.n
	} else if l.err == nil {
		l.err = c.err
	}
	l.mu.Unlock()
	close(c.done)
}

func (l *lineFile) write(b []byte) error {
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", l.name, err)
	}
	if l.f == nil {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", l.name, err)
	}
	return nil
}

// records returns how many records the file holds.
func (l *lineFile) records() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count
}

// close commits what is pending, stops the writer, and closes the file.
// It returns the first write or fsync error, if any.
func (l *lineFile) close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	close(l.kick)
	l.mu.Unlock()
	<-l.exited
	err := l.err
	if l.f != nil { // closing the file also drops its lock
		if cerr := l.f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", l.name, cerr)
		}
	}
	return err
}

// recordBuffers hold records being encoded until they are copied into a
// batch.
var recordBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxSpareBatch is the largest batch buffer a lineFile keeps for its
// next batch.
const maxSpareBatch = 4 << 20

// maxSpares is how many batch buffers a lineFile keeps: the one written
// and the one filling.
const maxSpares = 2

// maxPooledBuffer is the largest buffer put back in recordBuffers: an
// outsized record's buffer is left to the collector.
const maxPooledBuffer = 64 << 10

// getBuffer returns an empty buffer from recordBuffers.
func getBuffer() *bytes.Buffer {
	buf := recordBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	return buf
}

// putBuffer gives buf back to recordBuffers.
func putBuffer(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBuffer {
		recordBuffers.Put(buf)
	}
}
