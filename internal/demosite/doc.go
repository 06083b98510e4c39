// Package demosite serves a small news-like site for `crawler demo`, the
// end-to-end tests and the crawl benchmarks: paginated list pages linking
// to detail pages, with the traps a real site has — the same detail linked
// from several list pages, variant spellings of one URL (query order,
// fragments, absolute and relative forms), offsite links, a page in GBK,
// near-duplicate articles, pages that are gone (404) and pages that fail
// once (503) before working; and, when asked (Options.DisallowEvery,
// Options.PDFEvery), a robots.txt disallowing some detail pages and detail
// pages that are PDFs; and a redirect loop linked as an item
// (Options.RedirectLoop). It knows what a correct crawl must store (Expected)
// and count (Tally), so tests can check every item and every counter. A
// benchmark spreads it over several hosts
// (Options.FirstID gives each its own range of pages), slows it down
// (Options.Delay) and makes its pages heavy (Options.PageBytes).
package demosite
