package dedup

import (
	"fmt"
	"strconv"
)

// keys builds every key of one filter or index under the caller's
// namespace, which carries the hash tag, so all of them share one slot.
type keys struct{ ns string }

// slice is bloom block b of granule g.
func (k keys) slice(g int64, b int) string {
	return k.ns + ":bloom:" + strconv.FormatInt(g, 10) + ":" + strconv.Itoa(b)
}

// exact is the sorted set of raw fingerprint to expiry (unix ms).
func (k keys) exact() string { return k.ns + ":exact" }

// set is the scrapy-redis style SET of hex fingerprints.
func (k keys) set() string { return k.ns + ":set" }

// band is the near-duplicate index SET for one 16-bit band value.
func (k keys) band(i int, v uint16) string {
	return fmt.Sprintf("%s:band:%d:%04x", k.ns, i, v)
}
