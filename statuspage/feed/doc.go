// Package feed is what the cluster's processes publish for the status
// page beyond the job counters, and how the page reads it back: each
// slave's load (its real capacity, the tasks it holds, parks and fetches,
// and the hosts it holds most tasks for), and each job's failures by kind
// with the last few reasons. Everything is bounded: a slave's load is one
// key that expires with its lease, a job's failures one hash of kinds and
// one list of the last Recent reasons.
//
// Masters and slaves write through Feed; statuspage reads with Read*
// functions. It imports nothing of the crawler but cluster and store, so
// both sides can use it.
package feed
