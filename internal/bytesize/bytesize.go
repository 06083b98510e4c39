// Package bytesize reads sizes written for people: 268435456, 256MiB,
// 256MB or 1GiB, for flags and URI options alike.
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

var units = []struct {
	suffix string
	scale  int64
}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"TB", 1000 * 1000 * 1000 * 1000},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}

// Parse reads a size: a number of bytes, optionally with a decimal (KB,
// MB, GB, TB) or binary (KiB, MiB, GiB, TiB; K, M, G) unit, any case.
func Parse(s string) (int64, error) {
	v := strings.ToUpper(strings.TrimSpace(s))
	scale := int64(1)
	for _, u := range units {
		if strings.HasSuffix(v, u.suffix) {
			v, scale = strings.TrimSpace(strings.TrimSuffix(v, u.suffix)), u.scale
			break
		}
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size (e.g. 512MiB, 2GiB)", s)
	}
	return int64(n * float64(scale)), nil
}
