package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Change says what a visit of a page found.
type Change string

// What a visit finds; the names are also the job's counters.
const (
	// ChangeNew: the page was not stored before; its item is version 1.
	ChangeNew Change = "new"
	// ChangeChanged: its extracted fields differ from the stored ones;
	// the version is bumped and changed_at set.
	ChangeChanged Change = "changed"
	// ChangeUnchanged: the site sent the page again, and its fields hash
	// to the stored content hash; only checked_at is rewritten.
	ChangeUnchanged Change = "unchanged"
	// ChangeNotModified: the site answered 304 to the stored validators;
	// only checked_at is rewritten.
	ChangeNotModified Change = "not_modified"
)

// Stored is what a store keeps of a page between visits: what the next
// fetch sends (validators) and what its content is compared with.
type Stored struct {
	ETag         string    `bson:"etag,omitempty"`
	LastModified string    `bson:"last_modified,omitempty"`
	ContentHash  string    `bson:"content_hash,omitempty"`
	Version      int64     `bson:"version,omitempty"`
	ChangedRound int64     `bson:"changed_round,omitempty"`
	FirstSeenAt  time.Time `bson:"first_seen_at,omitempty"`
	ChangedAt    time.Time `bson:"changed_at,omitempty"`
	// Round is the round that last wrote the page in full (a touch does
	// not): a task of that round whose page is stored got as far as its
	// store write at least once.
	Round int64 `bson:"round,omitempty"`
	// CheckEvery and NextCheckAt are the page's adaptive re-crawl
	// schedule (Item.CheckEvery).
	CheckEvery  int64     `bson:"check_every,omitempty"`
	NextCheckAt time.Time `bson:"next_check_at,omitempty"`
}

// storedOf is what it holds of a page.
func storedOf(it Item) Stored {
	return Stored{ETag: it.ETag, LastModified: it.LastModified, ContentHash: it.ContentHash, Version: it.Version,
		ChangedRound: it.ChangedRound, FirstSeenAt: it.FirstSeenAt, ChangedAt: it.ChangedAt, Round: it.Round,
		CheckEvery: it.CheckEvery, NextCheckAt: it.NextCheckAt}
}

// Visit is one fetch of a page to record.
type Visit struct {
	// Item is the page's item: in full for a page the site sent; for a
	// NotModified one, ID, URL, Job, Fingerprint, Round and the
	// validators the 304 carried are enough.
	Item Item
	// NotModified is true when the site answered 304.
	NotModified bool
	// Looked is true when Prev is what the store held of the page before
	// the fetch (Validators; nil: nothing). Without it a Mongo store
	// inserts first and reads the page only if it exists: a first crawl
	// costs no read.
	Looked bool
	Prev   *Stored
	// Schedule, when set, learns the page's next check from what the
	// visit found (an adaptive re-crawl): it is written with the item,
	// on a touch too.
	Schedule Scheduler
}

// Scheduler learns a page's interval between checks (jobspec.Recrawl).
type Scheduler interface {
	// CheckSchedule is the interval after a visit that found the page
	// changed or not, from the interval before (0: none).
	CheckSchedule(prev time.Duration, changed bool) time.Duration
}

// VisitResult is what became of one Visit: what it found, or why it could
// not be recorded (then nothing of it was written, and it may be tried
// again).
type VisitResult struct {
	Change Change
	// Version is the page's version once the visit is recorded (1 for a
	// new page, bumped by a change, kept by an unchanged page or a 304;
	// 0 when the store did not know it).
	Version int64
	Err     error
}

// versionAfter is the page's version once a visit planned as it is
// recorded: the item's, or the stored one when the visit writes none (a
// touch).
func versionAfter(it Item, prev *Stored) int64 {
	if it.Version == 0 && prev != nil {
		return prev.Version
	}
	return it.Version
}

// ContentHash is the hash that decides whether a page changed: SHA-256 of
// its extracted fields as JSON (keys sorted), hex. Only the fields count:
// an ad, a timestamp or a session token elsewhere in the page does not.
func ContentHash(fields map[string]any) string {
	buf := getBuffer()
	defer putBuffer(buf)
	// json.Marshal's bytes, appended into a pooled buffer.
	b, ok := appendFieldsJSON(buf.AvailableBuffer(), fields)
	buf.Grow(len(b)) // the pooled buffer holds as much next time
	if !ok {
		// Encode adds a newline, not hashed.
		if err := json.NewEncoder(buf).Encode(fields); err != nil { // a field that is not JSON: every visit counts as changed
			return ""
		}
		b = bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// write is how a visit is recorded.
type write int

const (
	writeInsert  write = iota // a new document
	writeReplace              // the whole item (its content changed, or this round wrote it already)
	writeTouch                // checked_at only (and the validators, when the site sent new ones)
)

// plan decides what a visit found and how it is recorded, given what the
// store holds of the page (nil: nothing), with the page's next check when
// the visit has a Schedule.
func plan(prev *Stored, v Visit, now time.Time) (Item, Change, write) {
	it, change, w := planChange(prev, v, now)
	if v.Schedule != nil {
		var before time.Duration
		if prev != nil {
			before = time.Duration(prev.CheckEvery) * time.Second
		}
		every := v.Schedule.CheckSchedule(before, change == ChangeChanged)
		it.CheckEvery, it.NextCheckAt = int64(every/time.Second), now.Add(every)
	}
	return it, change, w
}

// planChange decides what a visit found and how it is recorded. A page
// delivered again in the round that changed it (its slave died before
// acknowledging) is reported as that round found it, and its version is
// not bumped twice.
func planChange(prev *Stored, v Visit, now time.Time) (Item, Change, write) {
	it := v.Item
	if !v.NotModified {
		it.ContentHash = ContentHash(it.Fields)
	}
	it.CheckedAt = now
	switch {
	case prev == nil && v.NotModified: // a 304 for a page not stored: cannot happen unless the item was deleted
		return it, ChangeNotModified, writeTouch
	case prev == nil:
		it.Version, it.ChangedRound, it.FirstSeenAt, it.ChangedAt = 1, it.Round, now, now
		return it, ChangeNew, writeInsert
	case prev.ChangedRound == it.Round && prev.Version > 0 && !v.NotModified:
		it.Version, it.ChangedRound, it.FirstSeenAt, it.ChangedAt = prev.Version, prev.ChangedRound, prev.FirstSeenAt, prev.ChangedAt
		return it, again(prev), writeReplace
	case prev.ChangedRound == it.Round && prev.Version > 0:
		return it, again(prev), writeTouch
	case v.NotModified:
		return it, ChangeNotModified, writeTouch
	case prev.ContentHash != "" && prev.ContentHash == it.ContentHash:
		return it, ChangeUnchanged, writeTouch
	}
	it.Version, it.ChangedRound, it.ChangedAt = prev.Version+1, it.Round, now
	it.FirstSeenAt = prev.FirstSeenAt
	if it.FirstSeenAt.IsZero() {
		it.FirstSeenAt = now
	}
	return it, ChangeChanged, writeReplace
}

// again is what a round that set the version found.
func again(prev *Stored) Change {
	if prev.Version == 1 {
		return ChangeNew
	}
	return ChangeChanged
}
