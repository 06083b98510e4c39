package dedup

import "encoding/hex"

// setMode builds the set-mode scripts' keys and arguments: scrapy-redis's
// SET of 40-hex fingerprints, with no expiry.
type setMode struct{ keys keys }

func (m setMode) call(fps []Fingerprint, _, _ int64) scriptCall {
	packed := make([]byte, len(fps)*2*len(Fingerprint{}))
	for i, fp := range fps {
		hex.Encode(packed[i*40:], fp[:])
	}
	return scriptCall{n: len(fps), modeKeys: []string{m.keys.set()}, modeArgs: []any{packed}}
}
