package dedup

import "strconv"

// keys builds every key of one filter under the caller's namespace, which
// carries the hash tag, so all of them share one slot.
type keys struct {
	ns string
	// layout names the bloom slices' layout (bloomShape.layoutTag): a job
	// resubmitted with another capacity, error rate or granularity starts
	// slices of its own instead of reading the old ones with the new
	// layout, which would take seen URLs for new.
	layout string
}

// slice is bloom block b of granule g.
func (k keys) slice(g int64, b int) string {
	return k.ns + ":bloom:" + k.layout + ":" + strconv.FormatInt(g, 10) + ":" + strconv.Itoa(b)
}

// blocks is every block of granule g's slice, n of them.
func (k keys) blocks(g int64, n int) []string {
	out := make([]string, n)
	for b := range out {
		out[b] = k.slice(g, b)
	}
	return out
}

// writer is the writer key of granule g's slice: the id of the filter
// that keeps an exact copy of it and writes lines without reading them
// (see sliceCache); deleted by any other writer.
func (k keys) writer(g int64) string {
	return k.ns + ":bloom:" + k.layout + ":" + strconv.FormatInt(g, 10) + ":writer"
}

// bloomKeys are the keys of a bloom filter with options o.
func bloomKeys(o Options) keys {
	return keys{ns: o.Namespace, layout: newBloomShape(o.withDefaults()).layoutTag()}
}

// exact is the sorted set of raw fingerprint to expiry (unix ms).
func (k keys) exact() string { return k.ns + ":exact" }

// set is the scrapy-redis style SET of hex fingerprints.
func (k keys) set() string { return k.ns + ":set" }
