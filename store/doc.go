// Package store writes what the crawl produces: items (one document per
// detail page per job) and failures (pages that could not be fetched after
// retries, with the reason). A slave stores an item and only then
// acknowledges its task, so a store's write returns nil only once the item
// is durable.
//
// Mongo writes to MongoDB collections `items` and `failed` (a slave
// gathers its concurrent item writes into one call, see slave/commit.go). File writes
// items to a JSON Lines, JSON or CSV file (FormatOf; `crawler run -o`, and
// --output of a master or slave without MongoDB) and failures to a JSON
// Lines file beside it, fsyncing each batch of concurrent writes (group
// commit). NewItemWriter writes items in any Format to a stream, for
// `client results`.
//
// Re-crawls record visits: Validators reads what a batch of pages holds
// (ETag, Last-Modified, content hash, version), one query per thousand
// pages; SaveVisits records a batch and says what each visit found
// (Change: new, changed, unchanged, not_modified). Only a new or changed
// page is written in full; an unchanged or not-modified one rewrites
// checked_at (MongoDB) or nothing (files). ContentHash, over the extracted
// fields, decides "changed".
//
// Writes are idempotent by ID ("<job>:<fingerprint>"): a redelivered task
// replaces its item (MongoDB) or is skipped (files), it never makes a
// second one. Package storetest checks that contract over every store.
package store
