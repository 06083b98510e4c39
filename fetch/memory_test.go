package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestFetcher_memoryBudget: pages count against the budget until released,
// so no more are held at once than it allows, with Content-Length known
// or not (the charge then grows as the body comes in, and a body that
// outgrows its charge gives it back before it waits: nobody deadlocks).
func TestFetcher_memoryBudget(t *testing.T) {
	const size = 100 << 10
	body := "<html><body>" + strings.Repeat("x", size-26) + "</body></html>"
	for _, chunked := range []bool{false, true} {
		t.Run("chunked="+strconv.FormatBool(chunked), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				if !chunked {
					w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				}
				for i := 0; i < len(body); i += 8 << 10 { // in pieces, flushed
					_, _ = w.Write([]byte(body[i:min(i+8<<10, len(body))]))
					w.(http.Flusher).Flush()
				}
			}))
			defer srv.Close()
			opts := DefaultOptions()
			opts.MemoryBudget = 2*size*PageCost + size // room for two pages, not three
			f := New(opts)
			var held, peak atomic.Int64
			var wg sync.WaitGroup
			for i := 0; i < 8; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					page, err := f.Do(context.Background(), Request{URL: srv.URL, AllowPrivate: true, MaxBodyBytes: 4 * size})
					if err != nil {
						t.Errorf("Do: %v", err)
						return
					}
					n := held.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					time.Sleep(30 * time.Millisecond) // parsing it
					held.Add(-1)
					page.Release()
					page.Release() // twice is harmless
				}()
			}
			wg.Wait()
			if p := peak.Load(); p > 2 || p < 1 {
				t.Errorf("%d pages held at once, want at most 2 under the budget", p)
			}
			if !f.memory.sem.TryAcquire(opts.MemoryBudget) {
				t.Error("the budget is not whole again after every page was released")
			}
		})
	}
}
