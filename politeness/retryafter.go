package politeness

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter reads a Retry-After header (RFC 9110 §10.2.3): a number
// of seconds or an HTTP date, relative to now. It reports false for an
// empty or unreadable header; a date in the past gives 0.
func ParseRetryAfter(header string, now time.Time) (time.Duration, bool) {
	header = strings.TrimSpace(header)
	if header == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(header, 10, 64); err == nil {
		if s < 0 || s > int64(7*24*time.Hour/time.Second) {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(header)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}
