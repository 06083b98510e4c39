package store

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkJSONL_Save: items/s through a JSON Lines file at 32 concurrent
// savers (a slave's fetchers), each save durable when it returns:
//
//	group-commit    the File store: callers share each write and fsync
//	fsync-per-item  the naive way: one write and one fsync per item, in turn
//	buffered        the old store, for scale: no fsync, lost on kill -9
func BenchmarkJSONL_Save(b *testing.B) {
	for _, tc := range []struct {
		name string
		open func(b *testing.B, path string) saver
	}{
		{"group-commit", func(b *testing.B, path string) saver {
			s, err := OpenJSONL(path)
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"fsync-per-item", func(b *testing.B, path string) saver { return openNaive(b, path, true) }},
		{"buffered", func(b *testing.B, path string) saver { return openNaive(b, path, false) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := tc.open(b, filepath.Join(b.TempDir(), "items.jsonl"))
			var next atomic.Int64
			b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0))) // 32 goroutines
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.SaveItem(context.Background(), benchItem(int(next.Add(1)))); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

type saver interface {
	SaveItem(ctx context.Context, it Item) error
	Close() error
}

// benchItem is a detail page of about 1.3 KB as a JSON line.
func benchItem(n int) Item {
	fp := strconv.Itoa(n)
	return Item{ID: ItemID("bench", fp), URL: "https://example.com/detail/" + fp, Job: "bench", Fingerprint: fp,
		Fields: map[string]any{"title": "Article " + fp, "body": strings.Repeat("lorem ipsum ", 100),
			"tags": []string{"a", "b", "c"}}, FetchedAt: time.Now().UTC(), Status: 200, Round: 1}
}

// naiveJSONL writes each item on its own, in turn: marshal, write and
// (when sync) fsync under one lock.
type naiveJSONL struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	sync bool
	seen map[string]bool
}

func openNaive(b *testing.B, path string, sync bool) *naiveJSONL {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	return &naiveJSONL{f: f, w: bufio.NewWriter(f), sync: sync, seen: map[string]bool{}}
}

func (n *naiveJSONL) SaveItem(_ context.Context, it Item) error {
	line, err := json.Marshal(it)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen[it.ID] {
		return nil
	}
	n.seen[it.ID] = true
	if !n.sync {
		_, err := n.w.Write(append(line, '\n'))
		return err
	}
	if _, err := n.f.Write(append(line, '\n')); err != nil {
		return err
	}
	return n.f.Sync()
}

func (n *naiveJSONL) Close() error {
	if err := n.w.Flush(); err != nil {
		return err
	}
	return n.f.Close()
}
