// Package queue is the reliable task queue between the master and the
// slaves, kept in Redis: each slave has, per job, a list of tasks waiting and
// a sorted set of tasks in flight scored by lease deadline. A slave takes
// tasks by moving them atomically into its in-flight set, renews their lease
// while it works, and acknowledges each one with its outcome through the
// job's ledger (package ledger), which counts the outcome only if the task
// was still in flight, so a task redelivered after a lapsed lease is
// counted exactly once; the steps here count nothing. The
// master reclaims tasks whose lease lapsed and re-routes a dead slave's.
// A slave marks a task started when its fetch begins; of the deliveries
// that end without an outcome only those count toward dead-lettering, so
// a holder that dies before it begins is never held against the page.
//
// All scripts take Redis server time (TIME), so process clocks do not matter,
// and touch only one job's keys, which share a hash tag.
package queue
