package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/demosite"
)

// robotsCounter counts a site's robots.txt requests.
type robotsCounter struct {
	mu       sync.Mutex
	requests []string // each one's User-Agent and Accept
}

func (c *robotsCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			c.mu.Lock()
			c.requests = append(c.requests, r.UserAgent()+" | "+r.Header.Get("Accept"))
			c.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// TestRun_robotsOncePerRound: crawler run fetches a host's robots.txt
// once in a round, for its list pages, its item pages and the sitemaps
// its robots.txt lists alike.
func TestRun_robotsOncePerRound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, job string
	}{
		{"short form", "list"},
		{"kinds and sitemaps", "shop"},
		{"kinds", "shop-nositemaps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			counter := &robotsCounter{}
			var h http.Handler
			var job string
			if tc.job != "list" {
				h = demosite.NewShop(demosite.ShopOptions{})
			} else {
				h = demosite.New(demosite.Options{Details: 40})
			}
			srv := httptest.NewServer(counter.wrap(h))
			t.Cleanup(srv.Close)
			if tc.job != "list" {
				job = demosite.ShopJobYAML("robots", srv.URL, tc.job == "shop")
			} else {
				job = demosite.JobYAML("robots", srv.URL)
			}
			path := filepath.Join(t.TempDir(), "robots.yaml")
			if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "items.jsonl")
			if stdout, stderr, err := crawler(t, 3*time.Minute, "run", "--job", path, "-o", out, "--quiet"); err != nil {
				t.Fatalf("crawler run: %v\n%s%s", err, stdout, stderr)
			}
			counter.mu.Lock()
			defer counter.mu.Unlock()
			if len(counter.requests) != 1 {
				t.Errorf("robots.txt fetched %d times in one round: %q", len(counter.requests), counter.requests)
			}
		})
	}
}
