// Package sink sends a slave's items to the places users want them beside
// the slave's store (MongoDB or the --output file): a PostgreSQL table
// (postgres://), WARC files (warc:DIR), a Kafka topic (kafka://), JSON
// Lines objects in an S3 bucket (s3://; it copies the warc: sink's files
// too). Each is named by a
// URI on the command line (`--sink URI`, repeatable; Open parses it and
// says what is wrong with a URI it cannot use); its credentials never
// reach a log or an error (Sink names are redacted by internal/redact).
//
// Fanout sends each batch of items to every sink and returns only once
// every sink took every item, or refused it for good (ErrRefused): a sink
// that is down is retried with backoff for as long as the caller's
// context lives. The slave acknowledges a task only after Fanout took its
// item, so a sink that is down holds the slave's acknowledgements (its
// tasks stay leased), and the slave slows instead of dropping items.
//
// Writes are idempotent by (job, fingerprint): a task delivered again
// after its slave died re-sends its item, and a sink that can dedupe
// (PostgreSQL: an upsert) keeps one row per page.
package sink
