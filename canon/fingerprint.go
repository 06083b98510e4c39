package canon

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ErrBadFingerprint is returned by ParseFingerprint for anything but 40 hex
// digits.
var ErrBadFingerprint = errors.New("bad fingerprint")

// Fingerprint identifies a request: the SHA1 of its method, canonical URL
// and body, as Scrapy computes it.
type Fingerprint [20]byte

// String returns the fingerprint as 40 lowercase hex digits, the form
// scrapy-redis stores.
func (f Fingerprint) String() string { return hex.EncodeToString(f[:]) }

// ParseFingerprint parses the 40 hex digits String returns.
func ParseFingerprint(s string) (Fingerprint, error) {
	var f Fingerprint
	if len(s) != 2*len(f) {
		return f, fmt.Errorf("parse fingerprint %q: %w: want %d hex digits", s, ErrBadFingerprint, 2*len(f))
	}
	if _, err := hex.Decode(f[:], []byte(s)); err != nil {
		return f, fmt.Errorf("parse fingerprint %q: %w: %v", s, ErrBadFingerprint, err)
	}
	return f, nil
}

// RequestFingerprint returns the SHA1 over the uppercased method, the
// canonical URL and the body, in that order (Scrapy's request fingerprint).
// canonicalURL must already be canonical (see URL).
func RequestFingerprint(method, canonicalURL string, body []byte) Fingerprint {
	h := sha1.New()
	h.Write([]byte(strings.ToUpper(method)))
	h.Write([]byte(canonicalURL))
	h.Write(body)
	var f Fingerprint
	h.Sum(f[:0])
	return f
}

// URLFingerprint canonicalizes raw and returns the fingerprint of a GET of
// it, with the canonical URL.
func URLFingerprint(raw string) (Fingerprint, string, error) {
	canon, err := URL(raw)
	if err != nil {
		return Fingerprint{}, "", err
	}
	return RequestFingerprint("GET", canon, nil), canon, nil
}
