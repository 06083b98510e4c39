//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// errLocked means another process has the file open for writing.
var errLocked = errors.New("in use by another process (each writer needs a file of its own)")

// lockFile takes an exclusive advisory lock on f, without waiting. The
// lock goes with the file's descriptor: closing f, or the process dying,
// drops it.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}
