package sink

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/internal/ctxtime"
)

// s3CloseTimeout bounds how long closing the s3:// sink waits for the
// WARC files still to copy; those left are copied at the next start.
const s3CloseTimeout = 5 * time.Minute

// linkArchives has each s3:// sink copy the completed files of each warc:
// sink among sinks.
func linkArchives(sinks []Sink) {
	for _, s := range sinks {
		s3, ok := s.(*S3)
		if !ok {
			continue
		}
		for _, w := range sinks {
			if warc, ok := w.(*WARC); ok {
				s3.copyWARCs(warc)
			}
		}
	}
}

// warcCopies copies completed WARC files into the bucket, in the
// background, one at a time, in the order they were completed. A file is
// fsynced and its tasks acknowledged before it is complete: it is safe on
// the slave's disk, and the copy is a copy. One that fails is tried again
// with backoff; one left when the sink closes is copied at the next start
// (the directory's completed files are looked at then, and those in the
// bucket at their size skipped).
type warcCopies struct {
	s3      *S3
	ctx     context.Context
	cancel  context.CancelFunc
	wake    chan struct{}
	closing chan struct{}
	done    chan struct{}

	mu   sync.Mutex
	todo []string
}

// copyWARCs starts copying w's completed files.
func (s *S3) copyWARCs(w *WARC) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &warcCopies{s3: s, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1), closing: make(chan struct{}),
		done: make(chan struct{})}
	s.copies = c
	go c.run()
	w.onComplete(c.add)
}

// add queues a completed file; it never blocks.
func (c *warcCopies) add(file string) {
	c.mu.Lock()
	c.todo = append(c.todo, file)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// next is the file to copy next; ok is false when none is queued.
func (c *warcCopies) next() (file string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.todo) == 0 {
		return "", false
	}
	return c.todo[0], true
}

func (c *warcCopies) pop() {
	c.mu.Lock()
	c.todo = c.todo[1:]
	c.mu.Unlock()
}

// run copies the queued files until closed with none left, or cancelled.
func (c *warcCopies) run() {
	defer close(c.done)
	wait := firstBackoff
	for {
		file, ok := c.next()
		if !ok {
			select {
			case <-c.wake:
				continue
			case <-c.closing:
				return
			}
		}
		if err := c.s3.copyFile(c.ctx, file); err != nil {
			c.s3.log.Warn("copy a WARC file to S3; trying again", zap.String("file", file), zap.Error(err))
			if ctxtime.Sleep(c.ctx, wait) != nil {
				return
			}
			wait = min(2*wait, lastBackoff)
			continue
		}
		c.pop()
		wait = firstBackoff
	}
}

// close waits for the queued files to be copied, up to s3CloseTimeout.
func (c *warcCopies) close() error {
	close(c.closing)
	select {
	case <-c.done:
	case <-time.After(s3CloseTimeout):
		c.cancel()
		<-c.done
	}
	c.cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.todo) > 0 {
		return fmt.Errorf("s3: %d WARC files not copied yet (the next start copies them), the first %s", len(c.todo), c.todo[0])
	}
	return nil
}

// warcKey names a WARC file's copy: PREFIX/warc/NAME.
func (s *S3) warcKey(file string) string {
	return path.Join(s.opts.prefix, "warc", filepath.Base(file))
}

// copyFile copies a completed WARC file into the bucket, unless an object
// of its name and size is there already; minio-go writes one larger than
// s3PartSize as a multipart upload.
func (s *S3) copyFile(ctx context.Context, file string) error {
	key := s.warcKey(file)
	fi, err := os.Stat(file)
	if errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("a WARC file to copy to S3 is gone", zap.String("file", file))
		return nil
	}
	if err != nil {
		return fmt.Errorf("copy %s: %w", file, err)
	}
	if st, err := s.client.StatObject(ctx, s.opts.bucket, key, minio.StatObjectOptions{}); err == nil && st.Size == fi.Size() {
		return nil
	}
	if _, err := s.client.FPutObject(ctx, s.opts.bucket, key, file,
		minio.PutObjectOptions{ContentType: "application/warc", PartSize: s3PartSize}); err != nil {
		return fmt.Errorf("copy %s to s3://%s/%s: %w", file, s.opts.bucket, key, err)
	}
	return nil
}
