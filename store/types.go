package store

import (
	"encoding/json"
	"time"
)

// Item is one detail page's extracted fields.
type Item struct {
	// ID is the item's identity, "<job>:<fingerprint>" (see ItemID).
	ID string `bson:"_id" json:"-"`
	// URL is the detail page's canonical URL.
	URL string `bson:"url" json:"url"`
	// FinalURL is the URL the page was fetched from after redirects, when
	// it differs from URL (redirects never leave the job's allowed domains).
	FinalURL string `bson:"final_url,omitempty" json:"final_url,omitempty"`
	// Job is the job's name.
	Job string `bson:"job" json:"job"`
	// Kind is the item's page kind, for a job written with kinds ("" in
	// the short form).
	Kind string `bson:"kind,omitempty" json:"kind,omitempty"`
	// Fields maps each configured field to a string or a list of strings.
	Fields map[string]any `bson:"fields" json:"fields"`
	// FetchedAt is when the page was fetched.
	FetchedAt time.Time `bson:"fetched_at" json:"fetched_at"`
	// Status is the HTTP status of the page.
	Status int `bson:"status" json:"status"`
	// Fingerprint is the hex request fingerprint.
	Fingerprint string `bson:"fingerprint" json:"fingerprint"`
	// Round is the crawl round that fetched it.
	Round int64 `bson:"round" json:"round"`
	// Simhash is the 64-bit simhash of the extracted text (as int64: BSON
	// has no unsigned integers).
	Simhash int64 `bson:"simhash" json:"simhash"`
	// NearDuplicateOf names an earlier page of the job whose text is within
	// Hamming distance 3, when there is one.
	NearDuplicateOf string `bson:"near_duplicate_of,omitempty" json:"near_duplicate_of,omitempty"`
	// Referer is the list page the link was found on.
	Referer string `bson:"referer,omitempty" json:"referer,omitempty"`
	// Slave is the ID of the slave that fetched it.
	Slave int `bson:"slave" json:"slave"`

	// ETag and LastModified are the validators the site sent with the
	// page, sent back on its next fetch (If-None-Match, If-Modified-Since).
	ETag         string `bson:"etag,omitempty" json:"etag,omitempty"`
	LastModified string `bson:"last_modified,omitempty" json:"last_modified,omitempty"`
	// ContentHash is the hash of the extracted fields (ContentHash), not of
	// the page: a changing ad or timestamp outside the fields is no change.
	ContentHash string `bson:"content_hash,omitempty" json:"content_hash,omitempty"`
	// Version is 1 for the first content seen, bumped when it changes.
	Version int64 `bson:"version,omitempty" json:"version,omitempty"`
	// FirstSeenAt is when the page was first stored, ChangedAt when its
	// content last changed (or first seen), CheckedAt when it was last
	// fetched, changed or not.
	FirstSeenAt time.Time `bson:"first_seen_at,omitempty" json:"first_seen_at,omitzero"`
	ChangedAt   time.Time `bson:"changed_at,omitempty" json:"changed_at,omitzero"`
	CheckedAt   time.Time `bson:"checked_at,omitempty" json:"checked_at,omitzero"`
	// ChangedRound is the round that set Version, so that a task delivered
	// again in that round (its slave died before acknowledging it) is
	// reported as it was the first time and bumps nothing twice.
	ChangedRound int64 `bson:"changed_round,omitempty" json:"changed_round,omitempty"`
	// CheckEvery is the page's interval between two checks in seconds,
	// and NextCheckAt when it is next due, under an adaptive re-crawl
	// (recrawl: {mode: adaptive}): learned from its visits, kept here so
	// that no per-page state lives in Redis between rounds.
	CheckEvery  int64     `bson:"check_every,omitempty" json:"check_every,omitempty"`
	NextCheckAt time.Time `bson:"next_check_at,omitempty" json:"next_check_at,omitzero"`
}

// Failure is a page that could not be fetched, with the reason.
type Failure struct {
	// ID is "<job>:<fingerprint>", so a page fails at most once per job.
	ID string `bson:"_id" json:"-"`
	// URL is the page's URL.
	URL string `bson:"url" json:"url"`
	// Job is the job's name.
	Job string `bson:"job" json:"job"`
	// Kind is the failure's kind: "detail" or "list" for a page that
	// could not be fetched; why a detail page was skipped on purpose:
	// "not_html", "robots" or "offsite"; or why a page that answered gave
	// no item: "missing_field" or "extract_limit". It is not the page's
	// kind in the job: that is PageKind.
	Kind string `bson:"kind" json:"kind"`
	// PageKind is the page's kind in the job (product, category; detail or
	// start in the short form), when its recorder knew it.
	PageKind string `bson:"page_kind,omitempty" json:"page_kind,omitempty"`
	// Reason says why it failed.
	Reason string `bson:"reason" json:"reason"`
	// Status is the last HTTP status the page answered (200 for a page
	// that answered but gave no item), or 0 when no response arrived.
	Status int `bson:"status" json:"status"`
	// Attempts is how many requests were made.
	Attempts int `bson:"attempts" json:"attempts"`
	// Transient is true when the last error was worth retrying (the retries
	// ran out); client retry-failed re-enqueues these.
	Transient bool `bson:"transient" json:"transient"`
	// FailedAt is when it was recorded.
	FailedAt time.Time `bson:"failed_at" json:"failed_at"`
	// Round is the crawl round.
	Round int64 `bson:"round" json:"round"`
	// Referer is the page that linked to it.
	Referer string `bson:"referer,omitempty" json:"referer,omitempty"`
}

// Failure kinds.
const (
	KindDetail = "detail"
	KindList   = "list"
	// KindNotHTML, KindRobots and KindOffsite are detail pages skipped on
	// purpose: not HTML, disallowed by robots.txt, redirected off the
	// allowed domains.
	KindNotHTML = "not_html"
	KindRobots  = "robots"
	KindOffsite = "offsite"
)

// Fingerprint is the page's fingerprint, the part of ID after the job.
func (f Failure) Fingerprint() string {
	prefix := f.Job + ":"
	if len(f.ID) <= len(prefix) || f.ID[:len(prefix)] != prefix {
		return ""
	}
	return f.ID[len(prefix):]
}

// ItemID is the identity of a job's page: "<job>:<fingerprint>".
func ItemID(job, fingerprint string) string { return job + ":" + fingerprint }

// UnmarshalJSON decodes an item line and rebuilds its ID from the job and
// fingerprint the line carries (the ID itself is not written).
func (it *Item) UnmarshalJSON(b []byte) error {
	type plain Item
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*it = Item(p)
	if it.Job != "" && it.Fingerprint != "" {
		it.ID = ItemID(it.Job, it.Fingerprint)
	}
	return nil
}

// MarshalJSON writes f with its fingerprint (field "fingerprint", the part
// of ID after the job), so that a failure line says which page it is.
func (f Failure) MarshalJSON() ([]byte, error) {
	type plain Failure
	return json.Marshal(struct {
		plain
		Fingerprint string `json:"fingerprint,omitempty"`
	}{plain(f), f.Fingerprint()})
}

// UnmarshalJSON decodes a failure line and rebuilds its ID from the job
// and fingerprint the line carries.
func (f *Failure) UnmarshalJSON(b []byte) error {
	type plain Failure
	var v struct {
		plain
		Fingerprint string `json:"fingerprint"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = Failure(v.plain)
	if f.Job != "" && v.Fingerprint != "" {
		f.ID = ItemID(f.Job, v.Fingerprint)
	}
	return nil
}
