// Package slave is a crawl worker. It registers its ID in the live node
// table and keeps the lease alive; takes detail tasks from its own queue of
// each running job (moving them atomically into its in-flight set, renewing
// their lease while it works); fetches each page with bounded concurrency;
// extracts the job's fields; marks near-duplicate content by simhash; writes
// the item (or the failure, with its reason) to the store; and only then
// acknowledges the task, so a crash at any point loses nothing and a
// redelivered task replaces its item instead of adding one. On shutdown it
// stops taking tasks, finishes or hands back what it holds, and deregisters.
//
// The slave never talks to the master: they meet in Redis.
package slave
