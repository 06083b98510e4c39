// Package cluster holds what the crawler's processes share: the job spec, the
// task that travels on the slave queues, node information, job counters and
// every Redis key name. Master, slave and client meet only in Redis and in
// these types; this package imports nothing else of the crawler's, so each
// role can depend on it without depending on another role.
package cluster
