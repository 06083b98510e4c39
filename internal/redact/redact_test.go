package redact

import (
	"strings"
	"testing"
)

// TestText: a driver's message that quotes a URI's secrets, whole or in
// parts, escaped or not, shows none of them.
func TestText(t *testing.T) {
	uri := "mongodb://al%40ice:p%2Fw@h/db?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:t0k3n%2Bx&tlsCertificateKeyFilePassword=hunter2"
	msg := "auth error for al@ice with p/w: session token t0k3n+x refused; key file password hunter2; " +
		"properties AWS_SESSION_TOKEN:t0k3n%2Bx; uri " + uri
	got := Text(msg, uri)
	for _, secret := range []string{"p/w", "p%2Fw", "t0k3n", "hunter2"} {
		if strings.Contains(got, secret) {
			t.Errorf("Text shows %q: %s", secret, got)
		}
	}
	if !strings.Contains(got, "MONGODB-AWS") || !strings.Contains(got, "auth error") {
		t.Errorf("Text hid more than the secrets: %s", got)
	}
}

// TestURL_public: options that carry no secret stay readable.
func TestURL_public(t *testing.T) {
	for _, uri := range []string{"mongodb://h/db?authSource=admin&authMechanism=SCRAM-SHA-256&w=majority",
		"https://lists.example.com/p.txt?format=txt", "redis://127.0.0.1:6379/0", "/etc/proxies.txt"} {
		if got := URL(uri); got != uri {
			t.Errorf("URL(%s) = %s, want it unchanged", uri, got)
		}
	}
}
