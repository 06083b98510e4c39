package fetch

import (
	"net/http"
	"testing"
	"time"
)

// TestParseRetryAfter: seconds and HTTP dates, capped at MaxRetryAfter
// (one hour, the longest pause a host's budget takes, so a page never
// waits out a Retry-After longer than its host's pause).
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"120", 2 * time.Minute},
		{" 7 ", 7 * time.Second},
		{"007", 7 * time.Second},
		{"3600", time.Hour},
		{"3601", MaxRetryAfter},
		{"86400", MaxRetryAfter},                   // a day: cut to an hour, a host's longest pause
		{"99999999999999999999999", MaxRetryAfter}, // overflows int64
		{"-5", 0},
		{"1.5", 0},
		{"soon", 0},
		{"Sun, 01 Mar 2026 12:01:30 GMT", 90 * time.Second},  // RFC 1123
		{"Sunday, 01-Mar-26 12:00:10 GMT", 10 * time.Second}, // RFC 850
		{"Sun Mar  1 12:00:05 2026", 5 * time.Second},        // asctime
		{"Sun, 01 Mar 2026 11:00:00 GMT", 0},                 // in the past
		{"Fri, 01 Mar 2030 12:00:00 GMT", MaxRetryAfter},
		{"Sun, 01 Mar 2026 12:01:30 +0800", 0}, // not an HTTP date
	} {
		if got := parseRetryAfter(tc.value, now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tc.value, got, tc.want)
		}
	}
}

func TestFetcher_Do_retryAfter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		retryAfter func() string
		min, max   time.Duration
	}{
		{"429 seconds", 429, func() string { return "7" }, 7 * time.Second, 7 * time.Second},
		{"503 date", 503, func() string { return time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat) }, 80 * time.Second, 90 * time.Second},
		{"503 without", 503, func() string { return "" }, 0, 0},
		{"500 ignores it", 500, func() string { return "7" }, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
				if v := tc.retryAfter(); v != "" {
					w.Header().Set("Retry-After", v)
				}
				w.WriteHeader(tc.status)
			})
			_, err := do(t, testFetcher(nil), Request{URL: s.URL})
			fe := fetchError(t, err)
			if fe.Status != tc.status || !fe.Transient || fe.RetryAfter < tc.min || fe.RetryAfter > tc.max {
				t.Errorf("Do = %+v; want status %d, transient, RetryAfter in %v..%v", fe, tc.status, tc.min, tc.max)
			}
			if n := s.hits.Load(); n != 1 {
				t.Errorf("Do made %d requests, want exactly 1", n)
			}
		})
	}
}
