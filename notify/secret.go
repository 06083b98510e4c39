package notify

import (
	"bytes"
	"fmt"
	"os"
	"sync/atomic"
)

// MinSecretBytes is the shortest webhook secret accepted: a short one
// could be guessed from signed requests.
const MinSecretBytes = 16

// Secret is the key webhooks are signed with, read from a file (the
// master's --webhook-secret-file) and read again by Reload. It is safe
// for concurrent use; its value is never logged.
type Secret struct {
	path string
	key  atomic.Pointer[[]byte]
}

// LoadSecret reads the secret file at path: its content, without the
// surrounding white space (a trailing newline), at least MinSecretBytes.
func LoadSecret(path string) (*Secret, error) {
	s := &Secret{path: path}
	if err := s.Reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Reload reads the file again; on an error the secret in use stays.
func (s *Secret) Reload() error {
	data, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("webhook secret: %w", err)
	}
	key := bytes.TrimSpace(data)
	if len(key) < MinSecretBytes {
		return fmt.Errorf("webhook secret %s: %d bytes is shorter than %d", s.path, len(key), MinSecretBytes)
	}
	s.key.Store(&key)
	return nil
}

// bytes returns the secret in use.
func (s *Secret) bytes() []byte { return *s.key.Load() }
