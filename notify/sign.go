package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The headers of a webhook request.
const (
	// SignatureHeader carries "sha256=" and the hex HMAC-SHA256, keyed by
	// the master's webhook secret, of the TimestampHeader's value, a dot,
	// and the body (Sign).
	SignatureHeader = "X-Crawler-Signature"
	// TimestampHeader is when the request was signed, in Unix seconds: a
	// receiver refuses a request signed long ago (a replay), and the
	// timestamp cannot be changed without breaking the signature.
	TimestampHeader = "X-Crawler-Timestamp"
	// EventHeader names the event (finished, failed, cancelled, paused).
	EventHeader = "X-Crawler-Event"
	// IDHeader is the event's ID (Event.ID): a receiver that has seen it
	// already ignores the request.
	IDHeader = "X-Crawler-Event-Id"
)

// signaturePrefix names the signature's algorithm.
const signaturePrefix = "sha256="

// Sign returns the SignatureHeader value of body sent at timestamp (Unix
// seconds, as TimestampHeader carries it): "sha256=" and the hex
// HMAC-SHA256 of timestamp + "." + body under secret.
func Sign(secret []byte, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}

// Verification errors.
var (
	// ErrBadSignature: the signature is missing, malformed, or not the
	// secret's.
	ErrBadSignature = errors.New("webhook signature does not match")
	// ErrStale: the request was signed outside the tolerance of now.
	ErrStale = errors.New("webhook timestamp outside the tolerance (a replay?)")
)

// Verify checks a webhook request as a receiver does: signature is the
// SignatureHeader's value, timestamp the TimestampHeader's, body the body
// as received; the timestamp must be within tolerance of now. Signatures
// are compared in constant time.
func Verify(secret []byte, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	if !strings.HasPrefix(signature, signaturePrefix) {
		return ErrBadSignature
	}
	if !hmac.Equal([]byte(Sign(secret, timestamp, body)), []byte(signature)) {
		return ErrBadSignature
	}
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q is not Unix seconds", ErrStale, timestamp)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed %s from now", ErrStale, d.Round(time.Second))
	}
	return nil
}
