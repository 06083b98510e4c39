package main

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag holding a number of bytes, written as 268435456,
// 256MiB, 256MB or 1GiB.
type byteSize struct{ n *int64 }

var byteUnits = []struct {
	suffix string
	scale  int64
}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"TB", 1000 * 1000 * 1000 * 1000},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}

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
	v := strings.ToUpper(strings.TrimSpace(s))
	scale := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(v, u.suffix) {
			v, scale = strings.TrimSpace(strings.TrimSuffix(v, u.suffix)), u.scale
			break
		}
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a size (e.g. 512MiB, 2GiB)", s)
	}
	*b.n = int64(n * float64(scale))
	return nil
}

// Type names the flag's type in help.
func (b byteSize) Type() string { return "size" }
