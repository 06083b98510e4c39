package ledger

import (
	"strconv"
	"strings"
)

// The outcome codes of ack.lua: Outcome.code writes them, one letter a
// task.
const (
	outcomeStored       = "s" // stored
	outcomeFailed       = "f" // failed
	outcomeSkipped      = "k" // skipped on purpose
	outcomeRetryStored  = "r" // stored after client retry-failed
	outcomeRetryFailed  = "x" // failed again after client retry-failed
	outcomeRetrySkipped = "q" // skipped after client retry-failed
)

// Outcome is how a task ended.
type Outcome struct {
	// Task is the task's wire form, exactly as taken.
	Task string
	// Failed is true when the page was recorded as failed, not stored.
	Failed bool
	// DeadLetter is true when it failed because it was delivered too many
	// times without an outcome (a poison task); Failed is then true too.
	DeadLetter bool
	// Skipped names the stats field counting why the page was left out on
	// purpose (cluster.StatSkippedNotHTML, ...); "" when it was not. A
	// skipped page counts as skipped, not failed.
	Skipped string
	// NearDuplicate is true when the stored item was marked a near-duplicate.
	NearDuplicate bool
	// Retries is how many extra tries the fetch took.
	Retries int
	// Retried marks a task re-enqueued by client retry-failed, whose
	// fingerprint is FP.
	Retried bool
	FP      string
	// Counts names more stats fields to add one to, with the outcome
	// (what a re-crawl found: cluster.StatChanged, ...), or to add more
	// to (Add: the bytes fetched).
	Counts []string
}

// Add is an entry of Outcome.Counts that adds n to field, not one.
func Add(field string, n int64) string { return field + "=" + strconv.FormatInt(n, 10) }

// counted is the stats fields the ack script adds one to besides the
// outcome's own: why it was skipped, and Counts.
func (o Outcome) counted() string {
	return strings.TrimSpace(o.Skipped + " " + strings.Join(o.Counts, " "))
}

// code is the outcome's one-letter form in the ack script.
func (o Outcome) code() string {
	switch {
	case o.Retried && o.Skipped != "":
		return outcomeRetrySkipped
	case o.Retried && o.Failed:
		return outcomeRetryFailed
	case o.Retried:
		return outcomeRetryStored
	case o.Skipped != "":
		return outcomeSkipped
	case o.Failed:
		return outcomeFailed
	}
	return outcomeStored
}
