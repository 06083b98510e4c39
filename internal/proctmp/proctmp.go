package proctmp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Names of the directories in the temporary directory that crawler
// processes make: this package's, and those older crawlers made at the
// top (a browser profile, a private redis-server's).
const (
	Prefix              = "crawler-proc-"
	legacyBrowserPrefix = "crawler-chromium-"
	legacyRedisPrefix   = "crawler-redis"
)

// OwnerFile is the file in a process's directory that names its owner.
const OwnerFile = "owner"

// Dir is a process's temporary directory.
type Dir struct {
	// Path is the directory.
	Path string
	// Removed are the directories of dead owners that Open removed.
	Removed []string

	prevTMPDIR string
	hadTMPDIR  bool
}

// Open removes from base (os.TempDir() when "") the directories of
// crawler processes that are gone (Sweep), makes this process's own
// directory there, records this process as its owner, and points TMPDIR at
// it, so that os.MkdirTemp("", …) here and in the processes started from
// here puts its directories in it. Close removes it.
func Open(base string) (*Dir, error) {
	if base == "" {
		base = os.TempDir()
	}
	removed, err := Sweep(base)
	if err != nil {
		return nil, err
	}
	me := self()
	path, err := os.MkdirTemp(base, fmt.Sprintf("%s%d-", Prefix, me.pid))
	if err != nil {
		return nil, fmt.Errorf("process temp dir: %w", err)
	}
	if err := writeOwner(path, me); err != nil {
		_ = os.RemoveAll(path)
		return nil, err
	}
	d := &Dir{Path: path, Removed: removed}
	d.prevTMPDIR, d.hadTMPDIR = os.LookupEnv("TMPDIR")
	if err := os.Setenv("TMPDIR", path); err != nil {
		_ = os.RemoveAll(path)
		return nil, fmt.Errorf("process temp dir: set TMPDIR: %w", err)
	}
	return d, nil
}

// writeOwner records o as the owner of dir: written aside and renamed, so
// a sweep never reads half of it.
func writeOwner(dir string, o owner) error {
	tmp := filepath.Join(dir, OwnerFile+".tmp")
	if err := os.WriteFile(tmp, []byte(o.String()), 0o600); err != nil {
		return fmt.Errorf("process temp dir: write owner: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, OwnerFile)); err != nil {
		return fmt.Errorf("process temp dir: write owner: %w", err)
	}
	return nil
}

// Close removes the directory and all it holds, and gives TMPDIR back
// its value from before Open. It is safe to call on nil.
func (d *Dir) Close() error {
	if d == nil {
		return nil
	}
	var err error
	if d.hadTMPDIR {
		err = os.Setenv("TMPDIR", d.prevTMPDIR)
	} else {
		err = os.Unsetenv("TMPDIR")
	}
	return errors.Join(err, os.RemoveAll(d.Path))
}

// Sweep removes the directories in base that crawler processes left
// behind: each process directory whose owner is gone, and each browser
// profile or redis-server directory of an older crawler whose process is
// gone. A directory whose owner runs, or cannot be told, stays. It returns
// the directories removed; an error only when base cannot be read, or a
// dead owner's directory cannot be removed.
func Sweep(base string) ([]string, error) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", base, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "crawler-") {
			continue
		}
		dir := filepath.Join(base, e.Name())
		o, ok := ownerOf(dir, e.Name())
		if !ok || o.alive() {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("sweep: %w", err))
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// ownerOf is the owner of a crawler's directory, false when it does not
// say.
func ownerOf(dir, name string) (owner, bool) {
	if !strings.HasPrefix(name, Prefix) {
		return legacyOwner(dir, name)
	}
	b, err := os.ReadFile(filepath.Join(dir, OwnerFile))
	if err != nil {
		return owner{}, false
	}
	o, err := parseOwner(b)
	return o, err == nil
}
