package dedup

// exactMember is the stored form of a fingerprint in exact mode: its first
// 16 raw bytes. 128 bits keep collisions out of reach (about 1e-20 at a
// billion URLs) and a 16-byte member fits a smaller allocator class than 20
// bytes or 40 hex digits, which is most of an entry's cost.
const exactMember = 16

// exactMode builds the exact-mode scripts' keys and arguments. The
// fingerprints live in one sorted set scored by expiry time: checking is
// one ZSCORE, and sweeping expired entries is a range removal by score
// (a hash of fingerprint to expiry would have to be scanned whole).
type exactMode struct {
	keys   keys
	window int64 // milliseconds
}

func (m exactMode) plan(b *batch, nowMs, _ int64) plan {
	fps := b.fps
	packed := make([]byte, 0, len(fps)*exactMember)
	for _, fp := range fps {
		packed = append(packed, fp[:exactMember]...)
	}
	// Sweep as many expired entries as this call may add, so memory stays
	// level under steady traffic with no periodic sweep.
	return plan{call: scriptCall{n: len(fps), modeKeys: []string{m.keys.exact()},
		modeArgs: []any{nowMs, m.window, len(fps), packed}}}
}
