package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"
)

func TestErrTransient(t *testing.T) {
	get := func(err error) error { return &url.Error{Op: "Get", URL: "http://example.com/", Err: err} }
	for _, tc := range []struct {
		name      string
		err       error
		transient bool
	}{
		{"closed before an answer", get(io.EOF), true},
		{"closed mid-body", fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), true},
		{"server closed idle connection", get(errors.New("http: server closed idle connection")), true},
		{"reset", get(&net.OpError{Op: "read", Err: syscall.ECONNRESET}), true},
		{"refused", get(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), true},
		{"deadline", get(context.DeadlineExceeded), true},
		{"temporary dns", get(&net.DNSError{Err: "server misbehaving", IsTemporary: true}), true},
		{"no such host", get(&net.DNSError{Err: "no such host", IsNotFound: true}), false},
		{"canceled", get(context.Canceled), false},
		{"blocked", get(&net.OpError{Op: "dial", Err: fmt.Errorf("dial: %w", ErrBlockedAddress)}), false},
		{"too large", fmt.Errorf("x: %w", ErrTooLarge), false},
		{"offsite", get(&OffsiteRedirectError{URL: "http://other/"}), false},
		{"bad certificate", get(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), false},
		{"not tls", get(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), false},
		{"something else", get(errors.New("malformed HTTP response")), false},
	} {
		if got := errTransient(tc.err); got != tc.transient {
			t.Errorf("%s: errTransient(%v) = %v, want %v", tc.name, tc.err, got, tc.transient)
		}
	}
}
