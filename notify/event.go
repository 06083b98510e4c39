package notify

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
)

// Event is the JSON body a webhook receives: what happened to which job,
// when, and the job's counters at that moment, as client status --json
// prints them.
type Event struct {
	// ID identifies the event: the same event sent again (its sender died
	// before it could mark it sent) has the same ID. Also in the
	// X-Crawler-Event-Id header.
	ID string `json:"id"`
	// Event is finished, failed, cancelled or paused (jobspec.Events).
	Event string `json:"event"`
	// Job is the job's name.
	Job string `json:"job"`
	// State is the job's state after the transition (finished, running,
	// ...), and Round its round (1 for a job that runs once; each round of
	// a recurring job sends its own finished or failed event).
	State string `json:"state"`
	Round int64  `json:"round"`
	// At is when the transition happened (RFC 3339, UTC).
	At          string `json:"at"`
	SubmittedAt string `json:"submitted_at,omitempty"`
	StartedAt   string `json:"started_at,omitempty"`
	FinishedAt  string `json:"finished_at,omitempty"`
	CancelledAt string `json:"cancelled_at,omitempty"`
	// NextRoundAt is when a recurring job's next round starts.
	NextRoundAt string `json:"next_round_at,omitempty"`
	// RoundSeconds is how long the round ran, from its start to At;
	// JobSeconds how long since the job was submitted.
	RoundSeconds float64 `json:"round_seconds"`
	JobSeconds   float64 `json:"job_seconds"`
	// Counters are the job's totals at the transition.
	Counters client.Counters `json:"counters"`
}

// NewEvent builds the event job's outbox entry rec describes.
func NewEvent(job string, rec cluster.OutboxEvent) Event {
	st := rec.State
	ev := Event{
		ID: eventID(job, st[cluster.StateSubmittedAt], rec.ID), Event: rec.Event, Job: job,
		State: st[cluster.StateField], At: rec.At,
		SubmittedAt: st[cluster.StateSubmittedAt], StartedAt: st[cluster.StateStartedAt],
		FinishedAt: st[cluster.StateFinishedAt], CancelledAt: st[cluster.StateCancelledAt],
		NextRoundAt: st[cluster.StateNextRoundAt], Counters: client.CountersOf(rec.Stats),
	}
	ev.Round, _ = strconv.ParseInt(st[cluster.StateRound], 10, 64)
	ev.RoundSeconds = seconds(ev.StartedAt, rec.At)
	ev.JobSeconds = seconds(ev.SubmittedAt, rec.At)
	return ev
}

// DecodeOutbox reads an outbox entry.
func DecodeOutbox(entry string) (cluster.OutboxEvent, error) {
	var rec cluster.OutboxEvent
	if err := json.Unmarshal([]byte(entry), &rec); err != nil {
		return rec, fmt.Errorf("decode outbox event: %w", err)
	}
	return rec, nil
}

// eventID is an event's identity: the job, its submission (a job reset
// and submitted again numbers its events anew) and the event's number.
func eventID(job, submittedAt string, seq int64) string {
	at, err := time.Parse(time.RFC3339Nano, submittedAt)
	if err != nil {
		return fmt.Sprintf("%s-%d", job, seq)
	}
	return fmt.Sprintf("%s-%d-%d", job, at.UnixMilli(), seq)
}

// seconds is the time from one RFC 3339 stamp to another, 0 when either
// is missing or the span is negative.
func seconds(from, to string) float64 {
	a, errA := time.Parse(time.RFC3339Nano, from)
	b, errB := time.Parse(time.RFC3339Nano, to)
	if errA != nil || errB != nil || b.Before(a) {
		return 0
	}
	return b.Sub(a).Seconds()
}
