package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
)

// Error is a failed fetch: the reason recorded for a failed page, and whether
// trying again may help.
type Error struct {
	// URL is the page that failed.
	URL string
	// Status is the HTTP status, or 0 when no response arrived.
	Status int
	// Transient is true for timeouts, connection resets, 429 and 5xx.
	Transient bool
	// Err is the underlying cause.
	Err error
}

// Error describes the failure.
func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("fetch %s: http status %d", e.URL, e.Status)
	}
	return fmt.Sprintf("fetch %s: %v", e.URL, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrBlockedAddress is returned when a host resolves to a loopback, private
// or otherwise non-public address and the job does not allow that.
var ErrBlockedAddress = errors.New("address not allowed (loopback/private network; set allow_private_networks)")

// ErrTooLarge is returned when a body exceeds the size limit.
var ErrTooLarge = errors.New("response body exceeds the size limit")

// IsTransient reports whether err is worth retrying.
func IsTransient(err error) bool {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Transient
	}
	return false
}

func statusTransient(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500
}

// errTransient classifies a transport error: timeouts, resets and refused
// connections may pass; a blocked address, a bad URL or too many redirects
// will not.
func errTransient(err error) bool {
	switch {
	case errors.Is(err, ErrBlockedAddress), errors.Is(err, ErrTooLarge), errors.Is(err, errTooManyRedirects):
		return false
	case errors.Is(err, context.Canceled):
		return false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTemporary || dnsErr.IsTimeout
	}
	var opErr *net.OpError
	return errors.As(err, &opErr)
}
