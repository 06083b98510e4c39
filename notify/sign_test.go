package notify

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

// TestVerify: a signed body verifies; a changed body, timestamp or secret,
// a stale timestamp and a malformed header do not.
func TestVerify(t *testing.T) {
	secret, body := []byte(testSecret), []byte(`{"job":"news","event":"finished"}`)
	now := time.Unix(1_800_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	sig := Sign(secret, ts, body)
	if err := Verify(secret, ts, sig, body, now.Add(time.Minute), 5*time.Minute); err != nil {
		t.Fatalf("a fresh signature does not verify: %v", err)
	}
	later := strconv.FormatInt(now.Unix()+1, 10)
	for name, tc := range map[string]struct {
		secret  []byte
		ts, sig string
		body    []byte
		want    error
	}{
		"body changed":      {secret, ts, sig, []byte(`{"job":"news","event":"failed"}`), ErrBadSignature},
		"timestamp changed": {secret, later, sig, body, ErrBadSignature},
		"other secret":      {[]byte("another-secret-of-16+"), ts, sig, body, ErrBadSignature},
		"no prefix":         {secret, ts, sig[len("sha256="):], body, ErrBadSignature},
		"empty":             {secret, ts, "", body, ErrBadSignature},
		"replayed":          {secret, ts, sig, body, ErrStale},
	} {
		t.Run(name, func(t *testing.T) {
			at := now
			if tc.want == ErrStale {
				at = now.Add(time.Hour)
			}
			if err := Verify(tc.secret, tc.ts, tc.sig, tc.body, at, 5*time.Minute); !errors.Is(err, tc.want) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestLoadSecret: the file's content without surrounding white space; a
// short one or a missing file is refused, and a failed Reload keeps the
// secret in use.
func TestLoadSecret(t *testing.T) {
	path := secretFile(t, "  "+testSecret+"\n")
	s, err := LoadSecret(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(s.bytes()) != testSecret {
		t.Errorf("secret = %q, want %q", s.bytes(), testSecret)
	}
	if _, err := LoadSecret(secretFile(t, "short\n")); err == nil {
		t.Error("a 5-byte secret was accepted")
	}
	if _, err := LoadSecret(path + ".missing"); err == nil {
		t.Error("a missing file was accepted")
	}
	if err := writeFile(path, "tiny"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err == nil || string(s.bytes()) != testSecret {
		t.Errorf("Reload of a short secret: %v, secret now %q; want an error and the old secret", err, s.bytes())
	}
	if err := writeFile(path, "a-brand-new-secret-value"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err != nil || string(s.bytes()) != "a-brand-new-secret-value" {
		t.Errorf("Reload: %v, secret now %q", err, s.bytes())
	}
}
