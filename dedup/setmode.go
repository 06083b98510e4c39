package dedup

import (
	"encoding/hex"

	"github.com/crawler-dev/crawler/canon"
)

// setMode builds the set-mode scripts' keys and arguments: scrapy-redis's
// SET of 40-hex fingerprints, with no expiry.
type setMode struct{ keys keys }

func (m setMode) plan(b *batch, _, _ int64) plan {
	fps := b.fps
	packed := make([]byte, len(fps)*2*len(canon.Fingerprint{}))
	for i, fp := range fps {
		hex.Encode(packed[i*40:], fp[:])
	}
	return plan{call: scriptCall{n: len(fps), modeKeys: []string{m.keys.set()}, modeArgs: []any{packed}}}
}
