package master

import (
	"crypto/sha1"
	"encoding/binary"

	"github.com/crawler-dev/crawler/canon"
)

// dedupKey is what the dupefilter is asked about a detail link of
// fingerprint fp in round: fp itself for a job that runs once, so that a
// job submitted anew skips what it fetched inside its window; for a
// recurring job (recrawl_every, schedule) fp and the round together, so
// that every round visits every page it finds, whatever dedup.window
// says, and the window deduplicates within the round. The task keeps fp,
// which names its item.
func (r *jobRunner) dedupKey(fp canon.Fingerprint, round int64) canon.Fingerprint {
	if !r.spec.Recurring() {
		return fp
	}
	return roundKey(fp, round)
}

// roundKey is fp salted with round: SHA-1 over both.
func roundKey(fp canon.Fingerprint, round int64) canon.Fingerprint {
	var b [len(fp) + 8]byte
	copy(b[:], fp[:])
	binary.BigEndian.PutUint64(b[len(fp):], uint64(round))
	return sha1.Sum(b[:])
}
