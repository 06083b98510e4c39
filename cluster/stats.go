package cluster

import "strconv"

// Job states as reported by client status.
const (
	StatePending  = "pending"
	StateRunning  = "running"
	StateFinished = "finished"
	// StatePaused: client pause stopped the job where it was; client
	// resume restores the state it was paused in (StatePausedFrom).
	StatePaused = "paused"
)

// Fields of a job's State hash.
const (
	StateField       = "state"
	StateRound       = "round"
	StateSubmittedAt = "submitted_at"
	StateStartedAt   = "started_at"
	StateFinishedAt  = "finished_at"
	StateNextRoundAt = "next_round_at"
	StateSeeded      = "seeded"           // seeds of the round queued so far
	StateCancel      = "cancel_requested" // client cancel asked the owning master to stop the job
	StateCancelledAt = "cancelled_at"     // when the master stopped it
	StatePausedAt    = "paused_at"        // when client pause paused it
	StatePausedFrom  = "paused_from"      // the state client resume restores
)

// Counter names in a job's Stats hash. Every detail link found on an allowed
// host that robots.txt allows is counted once as discovered and ends as
// exactly one of stored, failed, skipped, duplicates or cancelled; so once
// a job is finished, discovered = stored + failed + skipped + duplicates +
// cancelled. Discovered itself is derived: every detail link admitted is
// either routed or a duplicate, so discovered = routed + duplicates.
const (
	StatListPages      = "list_pages"      // list pages fetched
	StatListFailed     = "list_failed"     // list pages that could not be fetched
	StatOffsite        = "offsite"         // detail links outside allowed_domains (not discovered)
	StatInvalidLinks   = "invalid_links"   // detail links that are not valid http(s) URLs (not discovered)
	StatDuplicates     = "duplicates"      // detail links filtered by the dupefilter
	StatRouted         = "routed"          // new detail links routed to a slave queue
	StatStored         = "stored"          // detail pages stored as items
	StatFailed         = "failed"          // detail pages recorded as failed
	StatNearDuplicates = "near_duplicates" // stored items marked as near-duplicates
	StatRetries        = "retries"         // transient failures retried
	StatRecovered      = "recovered"       // failed pages stored after client retry-failed
	StatDeadLetters    = "dead_letters"    // failed pages given up after too many deliveries (also in failed)
	StatSkipped        = "skipped"         // detail pages left out on purpose (the three below; not failed)
	StatSkippedNotHTML = "skipped_not_html"
	StatSkippedRobots  = "skipped_robots"    // disallowed by robots.txt when the slave came to fetch them
	StatSkippedOffsite = "skipped_offsite"   // redirected off the allowed domains (list pages too, which are not in skipped)
	StatRobots         = "robots_disallowed" // detail links disallowed by robots.txt at the master (not discovered)
	StatCancelled      = "cancelled"         // detail tasks dropped unfetched by client cancel
	StatRendered       = "rendered"          // detail pages stored and list pages read from the DOM the headless browser left
)

// SlaveStat is the per-slave counter name for stat, e.g. "stored:3".
func SlaveStat(stat string, slave int) string {
	return stat + ":" + strconv.Itoa(slave)
}
