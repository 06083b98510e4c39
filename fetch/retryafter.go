package fetch

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxRetryAfter caps the wait read from a Retry-After header, so that a
// site cannot park a page for years (or overflow a time.Duration). It is
// the longest pause a host's politeness budget takes
// (politeness.Options.MaxPause by default): a page never waits out a
// Retry-After longer than its host is paused for.
const MaxRetryAfter = time.Hour

// retryAfter reads the Retry-After header of a 429 or 503 answer.
func retryAfter(resp *http.Response, now time.Time) time.Duration {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0
	}
	return parseRetryAfter(resp.Header.Get("Retry-After"), now)
}

// parseRetryAfter reads a Retry-After value, delay-seconds or an HTTP date,
// as a wait from now in 0..MaxRetryAfter; 0 when it is missing, malformed
// or in the past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(MaxRetryAfter/time.Second) { // only overflow fails here
			return MaxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	return min(max(at.Sub(now), 0), MaxRetryAfter)
}
