package api

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// Role is what a token may do: read, or read and write.
type Role int

const (
	// RoleNone is no valid token.
	RoleNone Role = iota
	// RoleRead may call the read endpoints.
	RoleRead
	// RoleWrite may call every endpoint.
	RoleWrite
)

// hashedPrefix marks a token kept in the file as its SHA-256 digest.
const hashedPrefix = "sha256:"

// minTokenLen is the shortest token the file may hold in the clear: a
// short one could be guessed despite the failure limiter.
const minTokenLen = 16

// token is one line of the file: a role and the digest of its token.
type token struct {
	role   Role
	digest [sha256.Size]byte
}

// Tokens are the API's bearer tokens, read from a file of lines
// `ROLE TOKEN` and read again by Reload. It is safe for concurrent use.
type Tokens struct {
	path string

	mu     sync.RWMutex
	tokens []token
}

// LoadTokens reads the token file at path. A malformed line is an error
// naming its number, never its text: it may hold a token.
func LoadTokens(path string) (*Tokens, error) {
	t := &Tokens{path: path}
	if _, err := t.Reload(); err != nil {
		return nil, err
	}
	return t, nil
}

// Reload reads the file again and returns how many tokens it holds. On an
// error it keeps the tokens it had.
func (t *Tokens) Reload() (int, error) {
	data, err := os.ReadFile(t.path)
	if err != nil {
		return 0, fmt.Errorf("api tokens: %w", err)
	}
	tokens, err := parseTokens(data)
	if err != nil {
		return 0, fmt.Errorf("api tokens %s: %w", t.path, err)
	}
	t.mu.Lock()
	t.tokens = tokens
	t.mu.Unlock()
	return len(tokens), nil
}

// parseTokens reads the lines of a token file: `ROLE TOKEN`, blank lines
// and # comments.
func parseTokens(data []byte) ([]token, error) {
	var out []token
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tok, err := parseToken(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, tok)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("holds no token (want lines of ROLE TOKEN, ROLE read or write)")
	}
	return out, nil
}

// parseToken reads one line; its errors never quote the line.
func parseToken(line string) (token, error) {
	fields := strings.Fields(line)
	if len(fields) != 2 {
		return token{}, fmt.Errorf("want ROLE TOKEN, found %d fields", len(fields))
	}
	var tok token
	switch fields[0] {
	case "read":
		tok.role = RoleRead
	case "write":
		tok.role = RoleWrite
	default:
		return token{}, errors.New("the role (first field) must be read or write")
	}
	secret := fields[1]
	if hexDigest, ok := strings.CutPrefix(secret, hashedPrefix); ok {
		d, err := hex.DecodeString(hexDigest)
		if err != nil || len(d) != sha256.Size {
			return token{}, fmt.Errorf("a %s token must be %d hex digits", hashedPrefix, 2*sha256.Size)
		}
		copy(tok.digest[:], d)
		return tok, nil
	}
	if len(secret) < minTokenLen {
		return token{}, fmt.Errorf("the token is shorter than %d characters", minTokenLen)
	}
	tok.digest = sha256.Sum256([]byte(secret))
	return tok, nil
}

// Role returns the role of a presented token, RoleNone for a wrong one. It
// compares digests in constant time and looks at every token, so the
// time it takes tells nothing of which one matched, or how closely.
func (t *Tokens) Role(presented string) Role {
	d := sha256.Sum256([]byte(presented))
	t.mu.RLock()
	defer t.mu.RUnlock()
	role := RoleNone
	for _, tok := range t.tokens {
		if subtle.ConstantTimeCompare(d[:], tok.digest[:]) == 1 && tok.role > role {
			role = tok.role
		}
	}
	return role
}
