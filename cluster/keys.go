package cluster

import (
	"fmt"
	"strconv"
)

// DefaultPrefix is the key prefix used when none is configured.
const DefaultPrefix = "crawler"

// Keys builds every Redis key the cluster uses, under one prefix. Keys that a
// single Lua script touches together share a hash tag (the part in braces) so
// that they live in one Redis Cluster slot: all keys of one job share the tag
// {PREFIX:job:NAME}; the node table shares {PREFIX:nodes}.
type Keys struct {
	// Prefix is put in front of every key; empty means DefaultPrefix.
	Prefix string
}

func (k Keys) prefix() string {
	if k.Prefix == "" {
		return DefaultPrefix
	}
	return k.Prefix
}

// Jobs is the sorted set of submitted job names, scored by submission time.
func (k Keys) Jobs() string { return k.prefix() + ":jobs" }

// TasksChannel is the Pub/Sub channel on which masters tell a slave that
// tasks were queued for it, so that an idle slave takes them at once
// rather than at its next poll; a message lost costs only that poll. The
// message is the job's name (earlier masters sent "1").
func (k Keys) TasksChannel(slave int) string { return fmt.Sprintf("%s:tasks:%d", k.prefix(), slave) }

// JobsVersion is a counter bumped whenever a job is submitted, starts a
// round, finishes or is cancelled: idle processes read it, one cheap GET,
// instead of every job's state each second.
func (k Keys) JobsVersion() string { return k.prefix() + ":jobs:version" }

// JobsChannel is the Pub/Sub channel on which whoever bumps JobsVersion
// says so, so that a master takes up a submitted job at once rather than
// at its next tick; a message lost costs only that tick.
func (k Keys) JobsChannel() string { return k.prefix() + ":jobs:changed" }

// Job returns the keys of one job.
func (k Keys) Job(name string) JobKeys {
	return JobKeys{tag: "{" + k.prefix() + ":job:" + name + "}"}
}

// Nodes returns the keys of the live node table.
func (k Keys) Nodes() NodeKeys {
	return NodeKeys{tag: "{" + k.prefix() + ":nodes}"}
}

// JobKeys names the keys of one job. They all share one hash tag, so a Lua
// script may touch any of them together.
type JobKeys struct{ tag string }

// Tag is the hash-tagged stem shared by all keys of the job; packages that
// own a sub-namespace (the dupefilter, the simhash index) build under it.
func (j JobKeys) Tag() string { return j.tag }

// Spec holds the job spec as JSON.
func (j JobKeys) Spec() string { return j.tag + ":spec" }

// State is a hash with the job's lifecycle: state, round, timestamps, owner.
func (j JobKeys) State() string { return j.tag + ":state" }

// Owner holds the ID of the master that owns the job, with a lease (PX).
func (j JobKeys) Owner() string { return j.tag + ":owner" }

// Fence is the job's fencing counter, bumped each time a master takes the
// job over; a master acts only while the fence still holds its token.
func (j JobKeys) Fence() string { return j.tag + ":fence" }

// Stats is a hash of the job's counters (see the Stat* field names).
func (j JobKeys) Stats() string { return j.tag + ":stats" }

// Seeds is the list of the job's seeds, each "<40 hex fingerprint> <list
// page>", queued onto the frontier a batch at a time at each round.
func (j JobKeys) Seeds() string { return j.tag + ":seeds" }

// SeedsStaging is where a submission writes the seeds before they replace
// the job's seeds in one step; token tells concurrent submissions apart.
func (j JobKeys) SeedsStaging(token string) string { return j.tag + ":seeds:staging:" + token }

// Frontier is the FIFO list of list pages waiting to be fetched (BFS order).
func (j JobKeys) Frontier() string { return j.tag + ":frontier" }

// FrontierActive is a sorted set of list pages being fetched, scored by the
// lease deadline of the master fetching them.
func (j JobKeys) FrontierActive() string { return j.tag + ":frontier:active" }

// ListSeen is the set of list-page fingerprints already queued in a round.
func (j JobKeys) ListSeen(round int64) string {
	return j.tag + ":listseen:" + strconv.FormatInt(round, 10)
}

// Committed is the set of list pages whose links were committed in a round,
// which makes committing a list page idempotent across a master restart.
func (j JobKeys) Committed(round int64) string {
	return j.tag + ":committed:" + strconv.FormatInt(round, 10)
}

// Queue is slave id's list of detail tasks waiting to be fetched.
func (j JobKeys) Queue(slave int) string { return fmt.Sprintf("%s:queue:%d", j.tag, slave) }

// Band is slave id's list of the detail tasks of priority p waiting to be
// fetched: Queue for priority 0, so a job whose pages all have priority 0
// keeps one list per slave as before; a list of its own for each other.
func (j JobKeys) Band(slave, p int) string {
	if p == 0 {
		return j.Queue(slave)
	}
	return fmt.Sprintf("%s:queue:%d:p%d", j.tag, slave, p)
}

// QueuePairs are, for each slave below maxSlaves, each band's list (of
// priorities: [0] or nil for a job whose pages all have priority 0) then
// the slave's in-flight set: the pairs the job ledger's finish and cancel
// steps look at.
func (j JobKeys) QueuePairs(maxSlaves int, priorities []int) []string {
	if len(priorities) == 0 {
		priorities = []int{0}
	}
	out := make([]string, 0, 2*maxSlaves*len(priorities))
	for i := range maxSlaves {
		for _, p := range priorities {
			out = append(out, j.Band(i, p), j.Inflight(i))
		}
	}
	return out
}

// Served is a hash of when (unix ms, Redis's clock) slave id last took
// tasks from each non-empty band of its queue, by priority: how long a
// band has waited, which ages it (queue.SlaveQueue.Take).
func (j JobKeys) Served(slave int) string { return fmt.Sprintf("%s:queue:%d:served", j.tag, slave) }

// Inflight is slave id's sorted set of tasks taken and not yet acknowledged,
// scored by lease deadline (unix milliseconds).
func (j JobKeys) Inflight(slave int) string { return fmt.Sprintf("%s:inflight:%d", j.tag, slave) }

// TaskAttempts is a hash counting how often each detail task was
// delivered (and why its last holder gave up), shared by every slave queue
// of the job so the count follows a task that is re-routed.
func (j JobKeys) TaskAttempts() string { return j.tag + ":attempts:tasks" }

// ListAttempts is the same for the list pages of the frontier.
func (j JobKeys) ListAttempts() string { return j.tag + ":attempts:lists" }

// Fields of an attempts hash (TaskAttempts, ListAttempts): each is one of
// these prefixes followed by the entry (a task's or list page's wire form)
// it is about. The queue scripts take them as ARGV.
const (
	AttemptCountPrefix  = "n:" // how many times the entry was delivered
	AttemptReasonPrefix = "e:" // why its last holder gave up on it
	// AttemptUnstartedPrefix counts the deliveries of a detail task that
	// ended before its fetch began: its holder died, froze or lost Redis
	// with it. They do not count toward dead-lettering.
	AttemptUnstartedPrefix = "u:"
)

// Retry is the list of failed detail tasks re-enqueued by client
// retry-failed, waiting for the master to route them.
func (j JobKeys) Retry() string { return j.tag + ":retry" }

// RenderWait is the list of detail tasks of rendered kinds (render: true)
// waiting for a live slave that can render: routed there while none is,
// or handed back by a slave whose browser would not start. The master
// routes them as soon as such a slave joins.
func (j JobKeys) RenderWait() string { return j.tag + ":renderwait" }

// Retrying is the set of fingerprints of re-enqueued failed tasks not yet
// acknowledged: it makes re-enqueueing and its accounting happen once.
func (j JobKeys) Retrying() string { return j.tag + ":retrying" }

// Dedup is the namespace of the job's detail-page dupefilter.
func (j JobKeys) Dedup() string { return j.tag + ":dedup" }

// Simhash is the namespace of the job's near-duplicate (simhash) index.
func (j JobKeys) Simhash() string { return j.tag + ":simhash" }

// NodeKeys names the keys of the live node table.
type NodeKeys struct{ tag string }

// Tag is the hash-tagged stem shared by the node table's keys.
func (n NodeKeys) Tag() string { return n.tag }

// Leases is a sorted set of live slave IDs scored by lease deadline.
func (n NodeKeys) Leases() string { return n.tag + ":leases" }

// Info is a hash of slave ID to its NodeInfo as JSON.
func (n NodeKeys) Info() string { return n.tag + ":info" }

// Config is a hash of cluster-wide constants every process must agree on,
// such as max_slaves.
func (n NodeKeys) Config() string { return n.tag + ":config" }

// Epoch is the live table's version, bumped on every join and leave.
func (n NodeKeys) Epoch() string { return n.tag + ":epoch" }
