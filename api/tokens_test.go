package api

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	readToken  = "read-token-0123456789"
	writeToken = "write-token-0123456789"
)

func writeTokens(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTokens_Role(t *testing.T) {
	hashed := "hashed-token-0123456789"
	sum := sha256.Sum256([]byte(hashed))
	tokens, err := LoadTokens(writeTokens(t, "# the team's tokens\n\nread "+readToken+"\n  write   "+writeToken+"  \n"+
		"write sha256:"+hex.EncodeToString(sum[:])+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for presented, want := range map[string]Role{readToken: RoleRead, writeToken: RoleWrite, hashed: RoleWrite,
		"": RoleNone, "wrong-token-0123456789": RoleNone, readToken + "x": RoleNone, "sha256:" + hex.EncodeToString(sum[:]): RoleNone} {
		if got := tokens.Role(presented); got != want {
			t.Errorf("Role(%q) = %v, want %v", presented, got, want)
		}
	}
}

// TestLoadTokens_refusesMalformedLines: each error names the line and
// never quotes the token.
func TestLoadTokens_refusesMalformedLines(t *testing.T) {
	secret := "s3cret-s3cret-s3cret"
	for name, c := range map[string]struct{ text, want string }{
		"one field":     {"read " + readToken + "\n" + secret + "\n", "line 2: want ROLE TOKEN, found 1 fields"},
		"three fields":  {"# c\nwrite " + secret + " extra\n", "line 2: want ROLE TOKEN, found 3 fields"},
		"unknown role":  {"admin " + secret + "\n", "line 1: the role (first field) must be read or write"},
		"swapped":       {secret + " read\n", "line 1: the role (first field) must be read or write"},
		"short token":   {"\n\nread short" + "\n", "line 3: the token is shorter than 16 characters"},
		"bad digest":    {"read sha256:" + secret + "\n", "line 1: a sha256: token must be 64 hex digits"},
		"no tokens":     {"# nothing\n\n", "holds no token"},
		"role in token": {"read  read\n", "line 1: the token is shorter"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadTokens(writeTokens(t, c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error quotes the token: %v", err)
			}
		})
	}
}

func TestTokens_Reload(t *testing.T) {
	path := writeTokens(t, "read "+readToken+"\n")
	tokens, err := LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("write "+writeToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := tokens.Reload(); err != nil || n != 1 {
		t.Fatalf("Reload = %d, %v", n, err)
	}
	if tokens.Role(readToken) != RoleNone || tokens.Role(writeToken) != RoleWrite {
		t.Error("the reloaded file's tokens are not the ones in use")
	}
	if err := os.WriteFile(path, []byte("nonsense\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Reload(); err == nil {
		t.Fatal("a malformed file reloaded")
	}
	if tokens.Role(writeToken) != RoleWrite {
		t.Error("a failed reload dropped the tokens in use")
	}
}

func TestFailureLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newFailureLimiter(3, time.Minute, 2)
	l.now = func() time.Time { return now }
	for i := range 3 {
		if l.blocked("a") != 0 {
			t.Fatalf("blocked after %d failures", i)
		}
		l.fail("a")
	}
	if got := l.blocked("a"); got != time.Minute {
		t.Fatalf("blocked for %v after 3 failures, want 1m", got)
	}
	if l.blocked("b") != 0 {
		t.Error("another address is blocked")
	}
	now = now.Add(40 * time.Second)
	if got := l.blocked("a"); got != 20*time.Second {
		t.Errorf("blocked for %v 40s later, want 20s", got)
	}
	now = now.Add(20 * time.Second)
	if l.blocked("a") != 0 {
		t.Error("still blocked once the window ended")
	}
	for _, addr := range []string{"c", "d", "e", "f"} {
		l.fail(addr)
	}
	if len(l.addrs) > 2 {
		t.Errorf("the limiter holds %d addresses, its bound is 2", len(l.addrs))
	}
}

func TestLimitKey(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1":            "127.0.0.1",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"::1":                  "::/64",
		"not an address":       "not an address",
		"::ffff:192.0.2.1":     "::ffff:192.0.2.1",
	} {
		if got := limitKey(addr); got != want {
			t.Errorf("limitKey(%q) = %q, want %q", addr, got, want)
		}
	}
}
