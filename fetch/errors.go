package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// Error is a failed fetch: the reason recorded for a failed page, whether
// trying again may help, and what a scheduler needs to plan the next try.
type Error struct {
	// URL is the page that failed (the requested URL, not a redirect target).
	URL string
	// Status is the site's HTTP status, or 0 when the site gave none (a
	// transport failure or a proxy fault). A page that is not HTML has its
	// 2xx status here.
	Status int
	// Transient is true when another try may succeed: timeouts, resets,
	// connections closed without an answer or mid-body, 408, 429, 5xx, and
	// every proxy fault.
	Transient bool
	// ProxyFault is true when the request went through Request.Proxy and
	// the proxy, not the site, failed it (see ErrProxy). The page is not at
	// fault: try it again through another proxy.
	ProxyFault bool
	// RetryAfter is the wait the site asked for in a Retry-After header on a
	// 429 or 503 answer (seconds or an HTTP date, capped at MaxRetryAfter);
	// 0 when it asked for none.
	RetryAfter time.Duration
	// Tries is how many requests were made: 1 from Do; a caller that
	// retries (downloader) counts its own.
	Tries int
	// Err is the underlying cause, for errors.Is and errors.As. Show the
	// failure with Error(): a misbehaving proxy can echo its credentials
	// into the cause's text, and only Error() hides them.
	Err error

	// secrets are scrubbed from Error(): the proxy's user name and password.
	secrets []string
}

// Error describes the failure. It never contains proxy credentials.
func (e *Error) Error() string {
	msg := fmt.Sprintf("fetch %s: %v", e.URL, e.Err)
	for _, s := range e.secrets {
		msg = strings.ReplaceAll(msg, s, "***")
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrBlockedAddress is returned when a host resolves to an address the job
// may not reach: loopback or private without allow_private_networks, and
// link-local or cloud-metadata addresses always.
var ErrBlockedAddress = errors.New("address not allowed (loopback/private network; set allow_private_networks)")

// errMetadataAddress is ErrBlockedAddress for an address no job may
// reach, allow_private_networks or not (link-local, cloud metadata): its
// text does not send the user to a setting that would not help.
var errMetadataAddress error = blockedAddress("address not allowed (link-local or cloud metadata service; refused even with allow_private_networks)")

// blockedAddress is an error that is ErrBlockedAddress with a text of its own.
type blockedAddress string

func (e blockedAddress) Error() string { return string(e) }

// Is makes errors.Is(e, ErrBlockedAddress) true.
func (blockedAddress) Is(target error) bool { return target == ErrBlockedAddress }

// AddressRefusal returns the address guard's refusal that err holds (an
// error that is ErrBlockedAddress, whose text names the rule), without
// the layers of the request around it; ErrBlockedAddress when err is one
// but the refusal cannot be told apart, nil when err is none.
func AddressRefusal(err error) error {
	if !errors.Is(err, ErrBlockedAddress) {
		return nil
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e == ErrBlockedAddress || e == errMetadataAddress {
			return e
		}
	}
	return ErrBlockedAddress
}

// ErrTooLarge is returned when a body, as sent or once decompressed,
// exceeds the size limit.
var ErrTooLarge = errors.New("response body exceeds the size limit")

// ErrNotHTML is returned, permanent, when a 2xx answer is neither HTML nor
// XHTML and Request.AllowNonHTML is false; its body was not downloaded.
// errors.As to *NotHTMLError gives the content type.
var ErrNotHTML = errors.New("not html")

// ErrOffsiteRedirect is returned, permanent, when a redirect leads to a
// host that Request.AllowHost refuses. errors.As to *OffsiteRedirectError
// gives the target.
var ErrOffsiteRedirect = errors.New("redirect to a host outside the allowed domains")

// ErrProxy marks a failure of the proxy rather than of the site: the proxy
// could not be reached, reset or closed the connection, timed out, answered
// garbage, refused the CONNECT or SOCKS request, or asked for credentials
// (407) before the site was reached. Always transient.
var ErrProxy = errors.New("proxy failed")

// ErrUnsupportedEncoding is returned, permanent, when a body comes with a
// Content-Encoding other than gzip, deflate, br or identity.
var ErrUnsupportedEncoding = errors.New("unsupported content-encoding")

// ErrInvalidRequest is returned, permanent, for a Request that cannot be
// sent (a bad URL, a refused header, a negative limit, a bad proxy URL); the
// chain also holds a *cluster.FieldError naming the field.
var ErrInvalidRequest = errors.New("invalid request")

// NotHTMLError is the cause behind ErrNotHTML.
type NotHTMLError struct {
	// ContentType is the type the answer declared, or the sniffed one.
	ContentType string
}

// Error names the content type.
func (e *NotHTMLError) Error() string { return fmt.Sprintf("not html (%s)", e.ContentType) }

// Is makes errors.Is(err, ErrNotHTML) true.
func (e *NotHTMLError) Is(target error) bool { return target == ErrNotHTML }

// OffsiteRedirectError is the cause behind ErrOffsiteRedirect.
type OffsiteRedirectError struct {
	// URL is the redirect target that was not followed.
	URL string
}

// Error names the target.
func (e *OffsiteRedirectError) Error() string {
	return fmt.Sprintf("%v: %s", ErrOffsiteRedirect, e.URL)
}

// Is makes errors.Is(err, ErrOffsiteRedirect) true.
func (e *OffsiteRedirectError) Is(target error) bool { return target == ErrOffsiteRedirect }

// proxyFault wraps a cause that ErrProxy describes.
type proxyFault struct{ err error }

func (e *proxyFault) Error() string        { return "proxy: " + e.err.Error() }
func (e *proxyFault) Unwrap() error        { return e.err }
func (e *proxyFault) Is(target error) bool { return target == ErrProxy }

// IsTransient reports whether err is worth retrying.
func IsTransient(err error) bool {
	var fe *Error
	return errors.As(err, &fe) && fe.Transient
}

// IsProxyFault reports whether err is the proxy's failure, not the site's.
func IsProxyFault(err error) bool {
	var fe *Error
	return errors.As(err, &fe) && fe.ProxyFault
}

func statusTransient(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500
}

// errServerClosedIdle is the text of net/http's unexported error for a
// server that closed a kept-alive connection as the request went out.
const errServerClosedIdle = "http: server closed idle connection"

// errTransient classifies a transport or body-read error: timeouts, resets,
// refused connections and connections closed before or during the answer
// may pass; a blocked address, a bad URL, a bad certificate or a limit will
// not.
func errTransient(err error) bool {
	switch {
	case isPermanent(err):
		return false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ETIMEDOUT), hasText(err, errServerClosedIdle):
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

// isPermanent reports the failures that no retry can fix.
func isPermanent(err error) bool {
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	for _, target := range []error{ErrBlockedAddress, ErrTooLarge, ErrNotHTML, ErrOffsiteRedirect,
		ErrUnsupportedEncoding, ErrInvalidRequest, ErrTooManyRedirects, context.Canceled} {
		if errors.Is(err, target) {
			return true
		}
	}
	return errors.As(err, &certErr) || errors.As(err, &recErr)
}

// hasText reports whether err or an error it wraps has exactly this text:
// the last resort for net/http errors that are not exported.
func hasText(err error, text string) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == text {
			return true
		}
	}
	return false
}
