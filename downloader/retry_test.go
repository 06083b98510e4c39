package downloader

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/internal/ctxtime"
)

// TestOptions_Backoff: each try waits twice as long as the one before,
// from RetryBase, with jitter in its upper half, up to RetryMax; a longer
// Retry-After from the site wins.
func TestOptions_Backoff(t *testing.T) {
	o := Options{RetryBase: 100 * time.Millisecond, RetryMax: time.Second}
	for tries, full := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond,
		3: 400 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 40: time.Second} {
		for range 20 {
			if got := o.Backoff(tries, nil); got < full/2 || got > full {
				t.Errorf("Backoff(%d) = %v, want within [%v, %v]", tries, got, full/2, full)
			}
		}
	}
	if got := o.Backoff(1, &fetch.Error{RetryAfter: 3 * time.Second}); got != 3*time.Second {
		t.Errorf("Backoff with Retry-After 3s = %v, want 3s (the site's wait, longer than ours)", got)
	}
	if got := o.Backoff(1, &fetch.Error{RetryAfter: time.Millisecond}); got < 50*time.Millisecond {
		t.Errorf("Backoff with Retry-After 1ms = %v, want our own wait (50-100ms), longer", got)
	}
}

// pageSite is a loopback site answering with answer(n) to its n'th
// request, counting them.
func pageSite(t *testing.T, answer func(n int64, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { answer(hits.Add(1), w, r) }))
	t.Cleanup(s.Close)
	return s, &hits
}

// fetchOnce is FetchPage with fast retries.
func fetchOnce(ctx context.Context, url string, retries int) (*fetch.Page, error) {
	opts := DefaultOptions()
	opts.RetryBase, opts.RetryMax = time.Millisecond, 5*time.Millisecond
	f := fetch.New(fetch.Options{Timeout: 5 * time.Second})
	defer f.CloseIdleConnections()
	return FetchPage(ctx, f, fetch.Request{URL: url, AllowPrivate: true}, retries, opts)
}

func TestFetchPage(t *testing.T) {
	ctx := context.Background()
	t.Run("503 then 200", func(t *testing.T) {
		s, hits := pageSite(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, "<p>ok</p>")
		})
		p, err := fetchOnce(ctx, s.URL, 3)
		if err != nil || p.Tries != 2 || string(p.Body) != "<p>ok</p>" || hits.Load() != 2 {
			t.Errorf("FetchPage = %v, %v after %d requests; want the page on try 2", p, err, hits.Load())
		}
	})
	t.Run("429 tried max_retries times again", func(t *testing.T) {
		s, hits := pageSite(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "slow down", http.StatusTooManyRequests)
		})
		for _, retries := range []int{0, 1, 4} {
			before := hits.Load()
			_, err := fetchOnce(ctx, s.URL, retries)
			var fe *fetch.Error
			if !errors.As(err, &fe) || fe.Status != 429 || !fe.Transient || fe.Tries != retries+1 {
				t.Errorf("retries %d: error %+v, want a transient 429 after %d tries", retries, err, retries+1)
			}
			if n := hits.Load() - before; n != int64(retries+1) {
				t.Errorf("retries %d: the site saw %d requests, want %d", retries, n, retries+1)
			}
		}
	})
	t.Run("a dropped connection tried again", func(t *testing.T) {
		s, _ := pageSite(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				c, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					c.Close()
				}
				return
			}
			fmt.Fprint(w, "<p>second try</p>")
		})
		if p, err := fetchOnce(ctx, s.URL, 2); err != nil || p.Tries != 2 || string(p.Body) != "<p>second try</p>" {
			t.Errorf("FetchPage = %v, %v; want the page on try 2", p, err)
		}
	})
	t.Run("a permanent failure is not tried again", func(t *testing.T) {
		s, hits := pageSite(t, func(_ int64, w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
		_, err := fetchOnce(ctx, s.URL, 3)
		var fe *fetch.Error
		if !errors.As(err, &fe) || fe.Status != 404 || fe.Transient || fe.Tries != 1 || hits.Load() != 1 {
			t.Errorf("FetchPage = %v after %d requests; want a permanent 404 after 1", err, hits.Load())
		}
	})
	t.Run("a Retry-After longer than our wait is waited out", func(t *testing.T) {
		s, _ := pageSite(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				w.Header().Set("Retry-After", "3")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			fmt.Fprint(w, "<p>ok</p>")
		})
		var waited []time.Duration
		sleep := func(_ context.Context, d time.Duration) error { waited = append(waited, d); return nil }
		p, err := fetchPage(ctx, fetch.New(fetch.Options{}), fetch.Request{URL: s.URL, AllowPrivate: true}, 2, DefaultOptions(), sleep)
		if err != nil || p.Tries != 2 || len(waited) != 1 || waited[0] != 3*time.Second {
			t.Errorf("FetchPage = %v, %v after waiting %v; want the page on try 2 after waiting [3s]", p, err, waited)
		}
	})
	t.Run("the context ends while backing off", func(t *testing.T) {
		s, hits := pageSite(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		})
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// The context ends as the wait for the retry begins.
		sleep := func(ctx context.Context, d time.Duration) error { cancel(); return ctxtime.Sleep(ctx, d) }
		_, err := fetchPage(ctx, fetch.New(fetch.Options{}), fetch.Request{URL: s.URL, AllowPrivate: true}, 3, DefaultOptions(), sleep)
		var fe *fetch.Error
		if !errors.Is(err, context.Canceled) || !errors.As(err, &fe) || fe.Status != 503 || fe.URL != s.URL {
			t.Errorf("FetchPage = %v; want the 503's *fetch.Error and context.Canceled", err)
		}
		if n := hits.Load(); n != 1 {
			t.Errorf("the site saw %d requests, want 1", n)
		}
	})
}
