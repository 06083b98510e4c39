package shopsite

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Site is the shop's handler. Serve it with httptest.NewServer.
type Site struct {
	pages      int
	validators bool
	delay      time.Duration

	mu      sync.Mutex
	version map[int]int
	// churn are the products that change each time /list is served:
	// once a round, as a round walks the list once.
	churn []int

	full, notModified, banner, bytes atomic.Int64
}

// New returns a shop of pages products; with validators it answers
// conditional requests; each product answer waits delay first.
func New(pages int, validators bool, delay time.Duration) *Site {
	return &Site{pages: pages, validators: validators, delay: delay, version: map[int]int{}}
}

// Full is how many product pages were sent in full, NotModified how many
// answered 304, Bytes the product body bytes sent.
func (s *Site) Full() int64        { return s.full.Load() }
func (s *Site) NotModified() int64 { return s.notModified.Load() }
func (s *Site) Bytes() int64       { return s.bytes.Load() }

// Change bumps the versions of products ids.
func (s *Site) Change(ids ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		s.version[id]++
	}
}

// ChangeEachRound makes products ids change each time /list is served
// from now on (each round of a crawl walks it once).
func (s *Site) ChangeEachRound(ids ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.churn = append(s.churn, ids...)
}

// Version is product id's version now: how often it changed.
func (s *Site) Version(id int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version[id]
}

// ServeHTTP serves /list and the products.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.URL.Path == "/list" {
		s.mu.Lock()
		for _, id := range s.churn {
			s.version[id]++
		}
		s.mu.Unlock()
		var b strings.Builder
		for i := range s.pages {
			fmt.Fprintf(&b, `<a class="p" href="/p/%d">product %d</a>`, i, i)
		}
		fmt.Fprintf(w, "<html><body>%s</body></html>", b.String())
		return
	}
	id, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
	if err != nil || id < 0 || id >= s.pages {
		http.NotFound(w, r)
		return
	}
	time.Sleep(s.delay) // a slow site, so that a test can strike mid-round
	s.mu.Lock()
	v := s.version[id]
	s.mu.Unlock()
	etag := fmt.Sprintf(`"p%d-v%d"`, id, v)
	if s.validators {
		if r.Header.Get("If-None-Match") == etag {
			s.notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
	}
	s.full.Add(1)
	n, _ := fmt.Fprintf(w, "<html><body><div class=ad>banner %d</div><h1>Product %d, version %d</h1>%s</body></html>",
		s.banner.Add(1), id, v, filler)
	s.bytes.Add(int64(n))
}

// filler makes a product page the size of a small real one (about 8 KiB).
var filler = "<p>" + strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 140) + "</p>"
