// Package jobspec is the job file: what a user writes to say what to crawl
// (seeds, page kinds, link and field rules, politeness, dedup, rendering,
// recrawl schedule), its YAML form, its defaults and its validation, with
// errors that name the field and line. docs/job-file.md documents every
// field, and its examples are this package's tests. Job is what
// `client submit` checks and stores in Redis and what masters and slaves
// load from there; the wire forms of the crawl itself (tasks, list pages,
// counters, keys) live in cluster. It imports nothing else of the
// crawler's.
package jobspec
