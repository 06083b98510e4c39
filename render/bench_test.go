package render

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/fetch"
)

// BenchmarkRender compares rendering a script-built page (its document
// fetched, then loaded in Chromium, its script and JSON requested, the
// DOM read) with fetching the same page plainly, on loopback, with the
// tabs a process would run. It reports pages/s and the browser's
// resident memory (all its processes) per tab, read after the run.
//
//	go test -run '^$' -bench Render -benchtime 40x ./render/
func BenchmarkRender(b *testing.B) {
	s := newSite(b)
	f := fetch.New(fetch.DefaultOptions())
	req := fetch.Request{URL: s.URL + "/spa", AllowPrivate: true}
	b.Run("fetch", func(b *testing.B) {
		start := time.Now()
		for range b.N {
			p, err := f.Do(context.Background(), req)
			if err != nil {
				b.Fatal(err)
			}
			p.Release()
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "pages/s")
	})
	for _, tabs := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("render/tabs=%d", tabs), func(b *testing.B) {
			opts := DefaultOptions()
			opts.Browser, opts.Tabs = newRenderer(b).opts.Browser, tabs
			r, err := New(opts, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			if err := r.Check(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			var peak atomic.Int64
			for range tabs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for left.Add(-1) >= 0 {
						p, err := f.Do(context.Background(), req)
						if err != nil {
							b.Error(err)
							return
						}
						_, err = r.Render(context.Background(), Page{URL: p.URL, Status: p.Status, ContentType: p.ContentType,
							Body: p.Body, Rendering: rendering(".price:not(:empty)"), AllowPrivate: true})
						p.Release()
						if err != nil {
							b.Error(err)
							return
						}
						if rss := treeRSS(r.pid()); rss > peak.Load() {
							peak.Store(rss)
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "pages/s")
			b.ReportMetric(float64(peak.Load())/float64(1<<20), "MiB_browser")
			b.ReportMetric(float64(peak.Load())/float64(tabs)/float64(1<<20), "MiB/tab")
		})
	}
}
