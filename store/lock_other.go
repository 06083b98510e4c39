//go:build !unix

package store

import "os"

// lockFile does nothing where flock(2) is missing: keep one writer per file.
func lockFile(*os.File) error { return nil }
