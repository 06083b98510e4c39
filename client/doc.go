// Package client is what users call to drive the cluster: it submits jobs
// to Redis (validated first), reports a job's state and counters, and
// exports a job's items. It talks only to Redis and the store, never to a
// master or slave directly.
package client
