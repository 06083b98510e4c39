// Package store writes what the crawl produces: items (one document per
// detail page per job) and failures (pages that could not be fetched after
// retries, with the reason). Mongo writes to MongoDB collections `items` and
// `failed`; JSONL writes JSON Lines files for `crawler run` without MongoDB.
// Writes are idempotent: a redelivered task replaces its item, it never
// makes a second one.
package store
