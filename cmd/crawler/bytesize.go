package main

import (
	"strconv"

	"github.com/crawler-dev/crawler/internal/bytesize"
)

// byteSize is a flag holding a number of bytes, written as 268435456,
// 256MiB, 256MB or 1GiB.
type byteSize struct{ n *int64 }

// String writes the size in the largest binary unit that divides it.
func (b byteSize) String() string {
	if b.n == nil {
		return "0"
	}
	for _, u := range []struct {
		suffix string
		scale  int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if *b.n != 0 && *b.n%u.scale == 0 {
			return strconv.FormatInt(*b.n/u.scale, 10) + u.suffix
		}
	}
	return strconv.FormatInt(*b.n, 10)
}

// Set parses a size.
func (b byteSize) Set(s string) error {
	n, err := bytesize.Parse(s)
	if err != nil {
		return err
	}
	*b.n = n
	return nil
}

// Type names the flag's type in help.
func (b byteSize) Type() string { return "size" }
