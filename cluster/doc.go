// Package cluster holds what the crawler's processes share on the wire:
// the task that travels on the slave queues, list pages and found links,
// node information, job counters and every Redis key name. Master, slave
// and client meet only in Redis and in these types; this package imports
// nothing of the crawler's but the job file (jobspec), so each role can
// depend on it without depending on another role.
package cluster
