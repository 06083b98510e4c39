// Package wake listens on a Redis Pub/Sub channel for the cluster's wake
// messages (a master telling a slave that tasks were queued for it, a
// client telling masters that a job changed), so that a process idle on a
// poll acts at once. A wake is only ever a shortcut: a message lost (a
// dropped connection, go-redis resubscribing) costs the listener its next
// poll, never work.
package wake
