// Package demosite serves a small news-like site for `crawler demo` and the
// end-to-end tests: paginated list pages linking to detail pages, with the
// traps a real site has — the same detail linked from several list pages,
// variant spellings of one URL (query order, fragments, absolute and
// relative forms), offsite links, a page in GBK, near-duplicate articles,
// pages that are gone (404) and pages that fail once (503) before working.
// It knows what a correct crawl must store, so tests can check every item.
package demosite
