package cluster

// Outbox is the list of the job's events (webhooks) waiting to be sent,
// oldest first: the ledger's step that makes a transition (a round
// finished, the job cancelled or paused) appends one in the same script,
// so no event is lost to a process that dies after the transition. Each
// entry is an OutboxEvent as JSON.
func (j JobKeys) Outbox() string { return j.tag + ":outbox" }

// OutboxActive is a sorted set of the outbox's events a master is sending,
// scored by the lease deadline: a master that dies while sending leaves
// them to another once the lease lapses.
func (j JobKeys) OutboxActive() string { return j.tag + ":outbox:active" }

// OutboxAttempts is the attempts hash of the outbox's events.
func (j JobKeys) OutboxAttempts() string { return j.tag + ":outbox:attempts" }

// OutboxSeq numbers the job's events: each one's ID is the next value.
func (j JobKeys) OutboxSeq() string { return j.tag + ":outbox:seq" }

// NotifySent is a hash whose fields, "<event id> <webhook URL>", mark an
// event delivered to a webhook, so an event taken again after its sender
// died is not sent twice where it arrived. The marks of an event go when
// it leaves the outbox.
func (j JobKeys) NotifySent() string { return j.tag + ":notify:sent" }

// NotifyWarnings is a hash of webhook URL to why the last event for it
// could not be delivered; client status shows its values among the job's
// warnings.
func (j JobKeys) NotifyWarnings() string { return j.tag + ":notify:warnings" }

// OutboxEvent is an entry of a job's Outbox, as the ledger's scripts
// write it (ledger/lua/outbox.lua): the event, the job's state and
// counters at the transition.
type OutboxEvent struct {
	// ID numbers the job's events (OutboxSeq).
	ID int64 `json:"id"`
	// Event is one of jobspec.Events.
	Event string `json:"event"`
	// At is when the transition happened (RFC 3339, Redis's clock).
	At string `json:"at"`
	// State is the job's state hash then (StateField, StateRound, ...).
	State map[string]string `json:"state"`
	// Stats is the job's stats hash then (Stat* fields).
	Stats map[string]string `json:"stats"`
}
