package statuspage

import (
	"context"
	"errors"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/proxy"
	"github.com/crawler-dev/crawler/statuspage/feed"
)

// ErrNotFound is returned by Source.Job for a job that was never submitted.
var ErrNotFound = errors.New("statuspage: no such job")

// Source is where the status page reads the cluster's state.
type Source interface {
	// Snapshot reads everything the page shows.
	Snapshot(ctx context.Context) (*Snapshot, error)
	// Job reads one job; a job never submitted is ErrNotFound.
	Job(ctx context.Context, name string) (*Job, error)
}

// Snapshot is the cluster at one moment: the document /api/status serves.
type Snapshot struct {
	// Time is when it was read, by the cluster's clock (the Redis server's).
	Time time.Time `json:"time"`
	// Cluster holds the constants the cluster runs with.
	Cluster Cluster `json:"cluster"`
	// Totals sums the jobs and slaves below; the page fills it in.
	Totals Totals `json:"totals"`
	// Jobs are the newest jobs, newest first.
	Jobs []Job `json:"jobs"`
	// Slaves are the live slaves, and the dead ones that still hold work,
	// sorted by ID.
	Slaves []Slave `json:"slaves"`
	// Hosts are the busiest hosts (the most tasks held) with their
	// politeness budget.
	Hosts []Host `json:"hosts"`
	// Proxies is the proxy pool with its best usable entries; nil when
	// it could not be read.
	Proxies *proxy.Listing `json:"proxies"`
	// Errors says which parts could not be read; the rest is still shown.
	Errors []string `json:"errors,omitempty"`
}

// Cluster holds the cluster-wide constants and counts shown in the page's
// header.
type Cluster struct {
	// Prefix is the Redis key prefix of the cluster.
	Prefix string `json:"prefix"`
	// MaxSlaves is the size of the virtual node table.
	MaxSlaves int `json:"max_slaves"`
	// Lease is the slaves' heartbeat lease, as the page assumes it
	// ("5s"); LeaseMS is the same in milliseconds.
	Lease   string `json:"lease"`
	LeaseMS int64  `json:"lease_ms"`
	// Epoch is the live node table's version, bumped on every join and
	// leave.
	Epoch int64 `json:"epoch"`
	// JobsTotal counts every job ever submitted; Jobs holds the newest.
	JobsTotal int64 `json:"jobs_total"`
}

// Job is one job's status, as `client status --json` prints it, with its
// progress.
type Job struct {
	client.Status
	// Progress is how much of the discovered work is done.
	Progress Progress `json:"progress"`
	// DurationMS is how long the job ran: from its start to its end, or to
	// now while it runs; 0 before it starts.
	DurationMS int64 `json:"duration_ms"`
	// Failures are the job's failures by kind and its last few reasons;
	// nil when they could not be read.
	Failures *feed.Failures `json:"failures,omitempty"`
	// Label is the state as the page shows it: "cancelled" for a job that
	// finished because client cancel stopped it (CancelledAt is set), else
	// State.
	Label string `json:"label"`
}

// Progress measures a job's detail pages: every page discovered ends as
// stored, failed or a duplicate, so Done = Stored + Failed + Duplicates
// reaches Total = Discovered when the job is finished.
type Progress struct {
	Done  int64 `json:"done"`
	Total int64 `json:"total"`
	// Percent is Done/Total in 0..100; 0 while nothing is discovered.
	Percent float64 `json:"percent"`
	// Stored, Failed and Duplicates are the shares of the bar, each in
	// percent of Total.
	Stored     float64 `json:"stored_pct"`
	Failed     float64 `json:"failed_pct"`
	Duplicates float64 `json:"duplicates_pct"`
}

// NewJob wraps a status with its progress.
func NewJob(st client.Status) Job {
	c := st.Counters
	p := Progress{Done: c.Settled(), Total: c.Discovered}
	if p.Total > 0 {
		pct := func(n int64) float64 { return min(100, 100*float64(n)/float64(p.Total)) }
		p.Percent, p.Stored, p.Failed, p.Duplicates = pct(p.Done), pct(c.Stored), pct(c.Failed), pct(c.Duplicates)
	}
	return Job{Status: st, Progress: p, Label: stateLabel(st)}
}

// stateLabel is the state a job's row shows.
func stateLabel(st client.Status) string {
	if st.State == cluster.StateFinished && st.CancelledAt != "" {
		return "cancelled"
	}
	return st.State
}

// withDuration sets DurationMS by now, the snapshot's time.
func (j *Job) withDuration(now time.Time) {
	start, err := time.Parse(time.RFC3339Nano, j.StartedAt)
	if err != nil {
		return
	}
	end := now
	if j.State == cluster.StateFinished {
		t, err := time.Parse(time.RFC3339Nano, j.FinishedAt)
		if err != nil {
			return // finished at an unknown time
		}
		end = t
	}
	j.DurationMS = max(0, end.Sub(start).Milliseconds())
}

// Slave is one slave as the page shows it: where it runs, its load, its
// last heartbeat, and its work summed over the jobs in the snapshot.
type Slave struct {
	ID int `json:"id"`
	// Live is false for a slave whose lease lapsed but whose queues still
	// hold work.
	Live        bool    `json:"live"`
	Host        string  `json:"host,omitempty"`
	PID         int     `json:"pid,omitempty"`
	Weight      float64 `json:"weight,omitempty"`
	Concurrency int     `json:"concurrency,omitempty"`
	// Capacity is how many tasks the slave holds for its fetchers: those
	// being fetched and those whose turn comes soon (HeldPerFetcher ×
	// Concurrency); it holds up to MaxParked more that wait long (a paused
	// or slow host's). Published is true when the slave published them
	// (and Held, Parked, Fetching, Waiting) itself.
	Capacity  int       `json:"capacity,omitempty"`
	MaxParked int       `json:"max_parked,omitempty"`
	Published bool      `json:"published"`
	Held      int       `json:"held"`
	Parked    int       `json:"parked"`
	Fetching  int       `json:"fetching"`
	Waiting   int       `json:"waiting"`
	StartedAt time.Time `json:"started_at,omitzero"`
	// LastHeartbeat is the lease deadline minus the lease;
	// HeartbeatAgeMS is Snapshot.Time minus it.
	LastHeartbeat  time.Time `json:"last_heartbeat,omitzero"`
	HeartbeatAgeMS int64     `json:"heartbeat_age_ms"`
	// InFlight is how many tasks the slave holds (leased from its queues):
	// being fetched, or waiting for their host's budget or robots.txt.
	InFlight int64 `json:"in_flight"`
	Queued   int64 `json:"queued"`
	Stored   int64 `json:"stored"`
	Failed   int64 `json:"failed"`
}

// HeldPerFetcher is how many tasks a slave holds per page it fetches at
// once: a slave leases up to 4 × its concurrency, so that tasks waiting
// for a slow host's budget do not leave its fetchers idle. Redis records
// what a slave holds, not what it is fetching this instant, so the page
// shows the tasks held against this capacity, never against the
// concurrency (which they exceed by design).
const HeldPerFetcher = 4

// Load is the share of the slave's capacity held for its fetchers, 0..1
// (0 when its capacity is not known): the tasks held less those parked,
// or, from a slave that published nothing, the tasks leased.
func (s Slave) Load() float64 {
	if s.Capacity <= 0 {
		return 0
	}
	return min(1, float64(s.ForFetchers())/float64(s.Capacity))
}

// ForFetchers is how many of its tasks count against Capacity.
func (s Slave) ForFetchers() int64 {
	if s.Published {
		return int64(max(0, s.Held-s.Parked))
	}
	return s.InFlight
}

// Totals are the sums shown at the top of the page, over the jobs and
// slaves of a snapshot: Stored, Failed and Duplicates over the running
// jobs only (each job's own are in its row), the queues over every job.
type Totals struct {
	JobsRunning int64 `json:"jobs_running"`
	SlavesLive  int64 `json:"slaves_live"`
	Queued      int64 `json:"queued"`
	InFlight    int64 `json:"in_flight"`
	Stored      int64 `json:"stored"`
	Failed      int64 `json:"failed"`
	Duplicates  int64 `json:"duplicates"`
}

// totalsOf sums the snapshot's jobs and slaves.
func totalsOf(s *Snapshot) Totals {
	var t Totals
	for _, j := range s.Jobs {
		if j.State == cluster.StateRunning {
			t.JobsRunning++
		}
		c := j.Counters
		t.Queued, t.InFlight = t.Queued+c.Queued, t.InFlight+c.InFlight
		if j.State != cluster.StateRunning {
			continue // a finished job's pages are its own row's, not the cluster's now
		}
		t.Stored, t.Failed, t.Duplicates = t.Stored+c.Stored, t.Failed+c.Failed, t.Duplicates+c.Duplicates
	}
	for _, sl := range s.Slaves {
		if sl.Live {
			t.SlavesLive++
		}
	}
	return t
}
