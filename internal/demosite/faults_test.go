package demosite

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSite_NextLinks walks a site whose list pages link the next three:
// every page is found, and page n links n+1..n+3 and no further.
func TestSite_NextLinks(t *testing.T) {
	s, srv := serve(t, Options{Details: 400, PerPage: 18, NextLinks: 3})
	lists, details, _ := crawl(t, srv)
	if len(lists) != s.ListPages() || len(details) != 400 {
		t.Fatalf("walk found %d list pages and %d details, want %d and 400", len(lists), len(details), s.ListPages())
	}
	_, body := get(t, srv.URL+"/list/5")
	for k := 6; k <= 9; k++ {
		if has := strings.Contains(string(body), `href="/list/`+strconv.Itoa(k)+`"`); has != (k <= 8) {
			t.Errorf("list page 5 links page %d: %v, want %v", k, has, k <= 8)
		}
	}
}

// TestSite_faults serves each fault in turn: a 404 for good, a 503 once,
// a 503 twice, a reset once and a stall, each page served after its fault.
func TestSite_faults(t *testing.T) {
	const every = 20
	s, srv := serve(t, Options{Details: 200, FaultEvery: every, Stall: 50 * time.Millisecond, GoneEvery: -1, FlakyEvery: -1})
	status := func(id int) (int, error) {
		resp, err := http.Get(srv.URL + CanonicalPath(id))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for _, tc := range []struct {
		id   int
		want []int // statuses of successive requests; 0: the connection reset
	}{
		{1 * every, []int{404, 404}},
		{2 * every, []int{503, 200}},
		{3 * every, []int{503, 503, 200}},
		{4 * every, []int{0, 200}},
		{5 * every, []int{200, 200}},
		{6 * every, []int{404}},
		{every + 1, []int{200}},
	} {
		for i, want := range tc.want {
			got, err := status(tc.id)
			if want == 0 {
				if err == nil {
					t.Errorf("detail %d, request %d: %d, want the connection reset", tc.id, i+1, got)
				}
				continue
			}
			if err != nil || got != want {
				t.Errorf("detail %d, request %d: %d (%v), want %d", tc.id, i+1, got, err, want)
			}
		}
	}
	start := time.Now()
	if _, err := status(10 * every); err != nil || time.Since(start) < 50*time.Millisecond {
		t.Errorf("stalling detail %d answered after %v (%v), want at least the 50ms stall", 10*every, time.Since(start), err)
	}
	if got, want := s.Faults(), (FaultCounts{Gone: 2, BusyOnce: 2, BusyTwice: 2, Resets: 2, Stalls: 2}); got != want || got.Retries() != 8 {
		t.Errorf("Faults = %+v (%d retries), want %+v (8 retries)", got, got.Retries(), want)
	}
	if got := s.Expected()[CanonicalPath(every)]; got != Gone {
		t.Errorf("Expected[%d] = %v, want Gone", every, got)
	}
}
