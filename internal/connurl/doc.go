// Package connurl parses the connection URLs the crawler's commands are
// given: the Redis URL dialect of --redis (a single server, a Redis
// Cluster as a comma list of seed nodes, Sentinel as redis+sentinel://),
// and MongoDB URIs far enough to refuse a malformed one before a driver
// quotes it. Every error it returns names what is wrong and the URL with
// its credentials hidden (internal/redact), never a password.
package connurl
