package cluster

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// FoundLinks is what a slave found on one item page, as it travels on the
// job's Found list to its master: the links to route (as a list page's
// are), and what the page's rules matched, for the job's warnings.
type FoundLinks struct {
	// Page is the item page's URL: the links' referer.
	Page string `json:"p"`
	// Kind is the item page's kind.
	Kind string `json:"k"`
	// Round is the crawl round of the task.
	Round int64 `json:"n,omitempty"`
	// Links are the links found, each with the kind it leads to.
	Links []FoundLink `json:"l,omitempty"`
	// RuleFound is how many links each of the kind's link rules selected.
	RuleFound []int `json:"r,omitempty"`
	// Empty names the fields that selected nothing.
	Empty []string `json:"e,omitempty"`
}

// FoundLink is one link found on an item page.
type FoundLink struct {
	URL  string `json:"u"`
	Kind string `json:"k"`
	// Priority is the priority of the rule that found it, when not 0.
	Priority int `json:"y,omitempty"`
}

// Encode returns the entry's wire form.
func (f FoundLinks) Encode() string {
	b, _ := json.Marshal(f) // strings, ints and slices of them always marshal
	return string(b)
}

// DecodeFoundLinks parses a Found entry's wire form.
func DecodeFoundLinks(s string) (FoundLinks, error) {
	var f FoundLinks
	if err := json.Unmarshal([]byte(s), &f); err != nil || f.Page == "" || f.Kind == "" {
		return FoundLinks{}, fmt.Errorf("decode found links %q: %v", s, err)
	}
	return f, nil
}

// Per-kind stats fields, for the job's warnings: how many pages of a kind
// were read, how many links each of its rules selected, and on how many
// pages each of its fields selected nothing. A rule or field that matched
// nothing on every page of its kind is a warning.
const (
	statRuleFound  = "rule_found"
	statFieldEmpty = "field_empty"
)

// Per-kind counters of a list kind's pages (KindStat): each page queued
// is discovered, and ends read (pages), failed, skipped, a duplicate (it
// was queued already) or cancelled. An item kind's pages count in the
// job's counters; pages of an item kind counts the item pages read.
const (
	KindDiscovered = "discovered"
	KindPages      = "pages"
	KindFailed     = "failed"
	KindSkipped    = "skipped"
	KindDuplicates = "duplicates"
	KindCancelled  = "cancelled"
)

// Per-kind counters of an item kind's pages, kept when a job has more
// than one item kind (with one, the job's counters are the kind's): its
// links admitted are routed or duplicates, so discovered = routed +
// duplicates; each routed page ends stored, failed, skipped or
// cancelled. Recovered counts the pages that left failed (stored or
// skipped when client retry-failed tried them again): the kind's failed
// is failed − recovered.
const (
	KindRouted    = "routed"
	KindStored    = "stored"
	KindRecovered = "recovered"
)

// KindStatPrefix starts every per-kind counter's stats field.
const KindStatPrefix = "kind:"

// KindStat is the stats field of a per-kind counter: kind:<kind>:<stat>.
func KindStat(kind, stat string) string { return KindStatPrefix + kind + ":" + stat }

// KindPagesStat is the stats field counting the pages of kind read.
func KindPagesStat(kind string) string { return KindStat(kind, KindPages) }

// RuleFoundStat is the stats field counting the links link rule i of kind
// selected.
func RuleFoundStat(kind string, i int) string {
	return statRuleFound + ":" + kind + ":" + strconv.Itoa(i)
}

// FieldEmptyStat is the stats field counting the pages of kind on which
// field selected nothing.
func FieldEmptyStat(kind, field string) string { return statFieldEmpty + ":" + kind + ":" + field }

// Stats of the sitemaps a job walks.
const (
	StatSitemaps       = "sitemaps"        // sitemap entries walked
	StatSitemapsFailed = "sitemaps_failed" // sitemaps that could not be fetched or read
	StatSitemapURLs    = "sitemap_urls"    // page URLs the sitemaps listed (after allow/deny)
)
