// Package redisserver starts a redis-server process of the caller's own:
// private (a Unix socket in a directory of its own, or a loopback port),
// keeping nothing on disk, and stopped with the caller. `crawler run`
// uses one, when redis-server is installed, instead of its in-process
// Redis, which costs more CPU per command; the benchmarks use one so that
// Redis's own statistics count their traffic alone.
package redisserver
