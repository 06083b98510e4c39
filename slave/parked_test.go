package slave

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestSlave_slowHostDoesNotStall: a slave's queue holds a dozen tasks of
// one host that makes them wait long, then tasks of another host. The
// first host's tasks wait parked (not counted against the tasks kept for
// the fetchers, 4 with concurrency 1), so the slave keeps taking tasks and
// the other host's pages are fetched and stored meanwhile.
func TestSlave_slowHostDoesNotStall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		robots string // the slow host's robots.txt; "" for none
		page   func(w http.ResponseWriter)
	}{
		{"paused by Retry-After", "", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "3600")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}},
		{"long Crawl-delay", "User-agent: *\nCrawl-delay: 30\n", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<html><body><h1>Slow</h1></body></html>"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb, keys := testenv.Redis(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					if tc.robots == "" {
						http.NotFound(w, r)
						return
					}
					_, _ = w.Write([]byte(tc.robots))
					return
				}
				tc.page(w)
			}))
			t.Cleanup(slow.Close)
			var otherHits atomic.Int64
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/other/") {
					otherHits.Add(1)
				}
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				_, _ = w.Write([]byte("<html><body><h1>Other</h1></body></html>"))
			}))
			t.Cleanup(other.Close) // on 127.0.0.1 too: reached as localhost, another host
			otherBase := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
			var paths []string
			for i := range 12 {
				paths = append(paths, fmt.Sprintf("/slow/%d", i))
			}
			jk := runningJob(t, ctx, rdb, keys, "mixed", slow.URL, paths...)
			for i := range 6 {
				rdb.RPush(ctx, jk.Queue(0), taskFor("mixed", fmt.Sprintf("%s/other/%d", otherBase, i)))
			}
			opts := DefaultOptions()
			opts.Concurrency = 1
			runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: jsonlStore(t)})
			testenv.Eventually(t, 30*time.Second, "the other host's 6 pages fetched and stored", func() bool {
				stored, _ := rdb.HGet(ctx, jk.Stats(), cluster.StatStored).Int()
				return otherHits.Load() == 6 && stored >= 6
			})
		})
	}
}

// TestSlave_maxParked: parked tasks are bounded: with MaxParked 2, a slave
// of concurrency 1 whose queue holds only a paused host's tasks holds at
// most 4 + 2 of them.
func TestSlave_maxParked(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	paused := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Retry-After", "3600")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	t.Cleanup(paused.Close)
	var paths []string
	for i := range 20 {
		paths = append(paths, fmt.Sprintf("/p/%d", i))
	}
	jk := runningJob(t, ctx, rdb, keys, "bounded", paused.URL, paths...)
	opts := DefaultOptions()
	opts.Concurrency, opts.MaxParked = 1, 2
	runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: jsonlStore(t)})
	held := func() int64 { return rdb.ZCard(ctx, jk.Inflight(0)).Val() }
	testenv.Eventually(t, 20*time.Second, "6 tasks held", func() bool { return held() == 6 })
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if n := held(); n > 6 {
			t.Fatalf("%d tasks held, want at most 4 for the fetcher and 2 parked", n)
		}
	}
}
