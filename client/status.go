package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/queue"
)

// Status is a job's state and counters, as `client status --json` prints it.
type Status struct {
	Job         string `json:"job"`
	State       string `json:"state"` // pending, running, paused or finished
	Round       int64  `json:"round"`
	SubmittedAt string `json:"submitted_at,omitempty"`
	StartedAt   string `json:"started_at,omitempty"`
	FinishedAt  string `json:"finished_at,omitempty"`
	NextRoundAt string `json:"next_round_at,omitempty"`
	CancelledAt string `json:"cancelled_at,omitempty"`
	// PausedAt is when client pause paused the job (state paused).
	PausedAt string `json:"paused_at,omitempty"`
	// Cancelling is true from client cancel until the owning master has
	// stopped the job.
	Cancelling bool `json:"cancelling,omitempty"`
	// BudgetReached names the budget (max_pages, max_bytes, max_duration)
	// that ended the round, or ended it early: nothing more was admitted
	// once it was reached (jobspec.Budget).
	BudgetReached string `json:"budget_reached,omitempty"`
	// Priority is the job's priority on the slaves (jobspec.Job.Priority),
	// when not 0.
	Priority int                    `json:"priority,omitempty"`
	Counters Counters               `json:"counters"`
	Slaves   map[string]SlaveCounts `json:"slaves"`
	// Rounds are what each round's visits found, by round number
	// (counters new, changed, unchanged and not_modified are their sums).
	Rounds map[string]RoundCounts `json:"rounds,omitempty"`
	// Kinds are the counters of each page kind. Warnings name the link
	// rules and fields that matched nothing on every page of their kind,
	// and say why a job that is not finished may not be making progress
	// (a proxy: require job while the pool holds no usable proxy), and
	// which of its webhooks could not be sent an event.
	Kinds    map[string]KindCounts `json:"kinds,omitempty"`
	Warnings []string              `json:"warnings,omitempty"`
	// Sinks are what the slaves' sinks (--sink) did with the job's items
	// and failures, by the sink's scheme ("postgres", "s3"; "s3#2" for a
	// slave's second sink of one scheme), the slaves' counts added up.
	Sinks map[string]SinkCounts `json:"sinks,omitempty"`
}

// SinkCounts are what the sinks of one scheme did with a job's records:
// the records they took, the tries that failed and were made again (one
// per record per try), and the records they will never take.
type SinkCounts struct {
	Accepted int64 `json:"accepted"`
	Retried  int64 `json:"retried"`
	Refused  int64 `json:"refused"`
}

// Counters are a job's totals. Once the job is finished,
// Discovered = Stored + Failed + Skipped + Duplicates + Cancelled (see
// Settled). SkippedOffsite also counts list pages redirected off the
// allowed domains, which are not discovered and so not in Skipped.
type Counters struct {
	ListPages        int64 `json:"list_pages"`
	ListFailed       int64 `json:"list_failed"`
	Discovered       int64 `json:"discovered"`
	Duplicates       int64 `json:"duplicates"`
	Offsite          int64 `json:"offsite"`
	InvalidLinks     int64 `json:"invalid_links"`
	RobotsDisallowed int64 `json:"robots_disallowed"`
	Routed           int64 `json:"routed"`
	Stored           int64 `json:"stored"`
	Failed           int64 `json:"failed"`
	Skipped          int64 `json:"skipped"`
	SkippedNotHTML   int64 `json:"skipped_not_html"`
	SkippedRobots    int64 `json:"skipped_robots"`
	SkippedOffsite   int64 `json:"skipped_offsite"`
	// The links refused for a budget (in Skipped for detail links; list
	// pages are not discovered), and the hosts that reached
	// max_pages_per_host, once a round each.
	SkippedMaxPages        int64 `json:"skipped_max_pages,omitempty"`
	SkippedMaxPagesPerHost int64 `json:"skipped_max_pages_per_host,omitempty"`
	SkippedMaxBytes        int64 `json:"skipped_max_bytes,omitempty"`
	SkippedMaxDuration     int64 `json:"skipped_max_duration,omitempty"`
	HostsClosed            int64 `json:"hosts_closed,omitempty"`
	DeadLetters            int64 `json:"dead_letters"`
	Cancelled              int64 `json:"cancelled"`
	NearDuplicates         int64 `json:"near_duplicates"`
	Retries                int64 `json:"retries"`
	Recovered              int64 `json:"recovered"`
	// Rendered counts the detail pages stored and the list pages read
	// from the DOM the headless browser left (kinds that say render).
	Rendered int64 `json:"rendered"`
	Queued   int64 `json:"queued"`
	InFlight int64 `json:"in_flight"`
	// WaitingForRenderer counts the tasks of kinds that say render that
	// wait for a live slave that can render (none is); not in Queued.
	WaitingForRenderer int64 `json:"waiting_for_renderer"`
	// What the visits of stored pages found, over every round: New +
	// Changed + Unchanged + NotModified = Stored.
	RoundCounts
}

// Settled is how many discovered pages have an outcome: stored, failed,
// skipped, filtered as duplicates, or dropped by client cancel. It equals
// Discovered once the job is finished.
func (c Counters) Settled() int64 {
	return c.Stored + c.Failed + c.Skipped + c.Duplicates + c.Cancelled
}

// NothingStored says why a job stored nothing, in the words of its job
// file, or returns "" when it stored an item.
func (c Counters) NothingStored() string {
	switch {
	case c.Stored > 0:
		return ""
	case c.ListPages == 0:
		return "no list page could be fetched"
	case c.Discovered == 0:
		return fmt.Sprintf("no item link was found on the %d list pages fetched", c.ListPages)
	case c.Duplicates == c.Discovered:
		return fmt.Sprintf("every one of the %d detail pages discovered was a duplicate of a page crawled before, within dedup.window", c.Discovered)
	case c.Cancelled > 0 && c.Failed+c.Skipped == 0:
		return fmt.Sprintf("the job was cancelled before a detail page was stored (%d discovered)", c.Discovered)
	}
	return fmt.Sprintf("no detail page could be stored (%d failed, %d skipped, %d duplicates, %d cancelled of %d discovered)",
		c.Failed, c.Skipped, c.Duplicates, c.Cancelled, c.Discovered)
}

// SlaveCounts are one slave's share of a job.
type SlaveCounts struct {
	Routed   int64 `json:"routed"`
	Stored   int64 `json:"stored"`
	Failed   int64 `json:"failed"`
	Queued   int64 `json:"queued"`
	InFlight int64 `json:"in_flight"`
}

// Status reads a job's status: its state, counters, every slave's share
// and queues, its rounds, page kinds and warnings. A finished job's queues
// are empty and are not read (but for a cancelled one's tasks in flight).
func (c *Client) Status(ctx context.Context, job string) (*Status, error) {
	return c.status(ctx, job, c.maxSlaves)
}

// status is Status reading maxSlaves slaves' queues.
func (c *Client) status(ctx context.Context, job string, maxSlaves int) (*Status, error) {
	jk := c.keys.Job(job)
	pipe := c.rdb.Pipeline()
	stateCmd, statsCmd := pipe.HGetAll(ctx, jk.State()), pipe.HGetAll(ctx, jk.Stats())
	specCmd, webhookCmd := pipe.Get(ctx, jk.Spec()), pipe.HVals(ctx, jk.NotifyWarnings())
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read state of job %s: %w", job, err)
	}
	state, stats := stateCmd.Val(), statsCmd.Val()
	if len(state) == 0 {
		return nil, fmt.Errorf("job %s: %w", job, ErrJobNotFound)
	}
	depth := queue.Depth{Queued: make([]int64, maxSlaves), Inflight: make([]int64, maxSlaves)}
	spec, specErr := jobspec.Decode([]byte(specCmd.Val()))
	if state[cluster.StateField] != cluster.StateFinished || state[cluster.StateCancelledAt] != "" {
		q := queue.New(c.rdb, jk)
		if specErr == nil {
			q.WithBands(spec.QueueBands()) // its tasks of each priority queued in a band of their own
		}
		d, err := q.Depth(ctx, maxSlaves)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", job, err)
		}
		depth = d
		// An acknowledgement between the counters' read and the queues'
		// moves tasks from in flight to stored unseen: read the counters
		// again after, and use them when they moved (a few tries).
		for try := 0; try < 3; try++ {
			again, err := c.rdb.HGetAll(ctx, jk.Stats()).Result()
			if err != nil || maps.Equal(again, stats) {
				break
			}
			stats = again
			if depth, err = q.Depth(ctx, maxSlaves); err != nil {
				return nil, fmt.Errorf("job %s: %w", job, err)
			}
		}
	}
	st := &Status{
		Job: job, State: state[cluster.StateField], SubmittedAt: state[cluster.StateSubmittedAt],
		StartedAt: state[cluster.StateStartedAt], FinishedAt: state[cluster.StateFinishedAt],
		NextRoundAt: state[cluster.StateNextRoundAt], CancelledAt: state[cluster.StateCancelledAt],
		PausedAt: state[cluster.StatePausedAt], Slaves: map[string]SlaveCounts{},
	}
	_, st.Cancelling = state[cluster.StateCancel]
	st.BudgetReached = state[cluster.StateBudgetReached]
	st.Round, _ = strconv.ParseInt(state[cluster.StateRound], 10, 64)
	st.Counters = CountersOf(stats)
	st.Counters.Queued, st.Counters.InFlight = depth.Total()
	st.Counters.WaitingForRenderer = depth.RenderWait
	st.Slaves = slaveCounts(stats, depth)
	st.Counters.RoundCounts, st.Rounds = recrawlCounts(stats)
	st.Sinks = sinkCounts(stats)
	if specErr == nil {
		st.Priority = spec.Priority
		st.Kinds, st.Warnings = kindStatus(spec, stats, st.Counters)
		st.Warnings = append(st.Warnings, c.proxyWarnings(ctx, spec, st)...)
		st.Warnings = append(st.Warnings, c.renderWarnings(ctx, st)...)
	}
	st.Warnings = append(st.Warnings, webhookWarnings(webhookCmd.Val())...)
	return st, nil
}

// CountersOf reads a job's totals from its stats hash (cluster.Stat*
// fields), as Status does; Queued and InFlight, which the queues hold,
// are left 0.
func CountersOf(stats map[string]string) Counters {
	n := func(k string) int64 { v, _ := strconv.ParseInt(stats[k], 10, 64); return v }
	c := Counters{
		ListPages: n(cluster.StatListPages), ListFailed: n(cluster.StatListFailed),
		Duplicates: n(cluster.StatDuplicates), Offsite: n(cluster.StatOffsite),
		InvalidLinks: n(cluster.StatInvalidLinks), RobotsDisallowed: n(cluster.StatRobots), Routed: n(cluster.StatRouted),
		Stored: n(cluster.StatStored), Failed: n(cluster.StatFailed), Skipped: n(cluster.StatSkipped),
		SkippedNotHTML: n(cluster.StatSkippedNotHTML), SkippedRobots: n(cluster.StatSkippedRobots),
		SkippedOffsite: n(cluster.StatSkippedOffsite), DeadLetters: n(cluster.StatDeadLetters),
		Cancelled:      n(cluster.StatCancelled),
		NearDuplicates: n(cluster.StatNearDuplicates), Retries: n(cluster.StatRetries),
		Recovered: n(cluster.StatRecovered), Rendered: n(cluster.StatRendered),
		SkippedMaxPages: n(cluster.StatSkippedMaxPages), SkippedMaxPagesPerHost: n(cluster.StatSkippedMaxPagesPerHost),
		SkippedMaxBytes: n(cluster.StatSkippedMaxBytes), SkippedMaxDuration: n(cluster.StatSkippedMaxDuration),
		HostsClosed: n(cluster.StatHostsClosed),
	}
	c.Discovered = c.Routed + c.Duplicates
	return c
}

// slaveCounts gathers the per-slave counters ("stored:3") and queue depths.
func slaveCounts(stats map[string]string, depth queue.Depth) map[string]SlaveCounts {
	out := map[string]SlaveCounts{}
	for k, v := range stats {
		stat, id, ok := strings.Cut(k, ":")
		if _, err := strconv.Atoi(id); !ok || err != nil {
			continue // not a slave's counter (a kind's)
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		sc := out[id]
		switch stat {
		case cluster.StatRouted:
			sc.Routed = n
		case cluster.StatStored:
			sc.Stored = n
		case cluster.StatFailed:
			sc.Failed = n
		}
		out[id] = sc
	}
	for i := range depth.Queued {
		if depth.Queued[i] == 0 && depth.Inflight[i] == 0 {
			continue
		}
		id := strconv.Itoa(i)
		sc := out[id]
		sc.Queued, sc.InFlight = depth.Queued[i], depth.Inflight[i]
		out[id] = sc
	}
	return out
}

// BetweenRounds reports whether the job has finished a round and waits
// for its next one (recrawl_every or schedule); a cancelled job does not.
func (st *Status) BetweenRounds() bool {
	return st.State == cluster.StateFinished && st.NextRoundAt != "" && st.CancelledAt == ""
}

// Wait polls the job's status every interval until it is finished or ctx
// ends, calling progress (if not nil) with each status read. When ctx
// ends it returns the last status read (nil if none was) and ctx's error.
func (c *Client) Wait(ctx context.Context, job string, interval time.Duration, progress func(*Status)) (*Status, error) {
	return c.WaitFor(ctx, job, interval, progress, func(st *Status) bool { return st.State == cluster.StateFinished })
}

// WaitFor is Wait until done, rather than the job's end, says so.
func (c *Client) WaitFor(ctx context.Context, job string, interval time.Duration, progress func(*Status),
	done func(*Status) bool) (*Status, error) {
	return Follow(ctx, job, c.Status, interval, progress, done)
}

// ErrRefused marks an error of a status read that asking again will not
// mend (the API refused the caller): Follow stops at it.
var ErrRefused = errors.New("refused")

// Follow is WaitFor over any way of reading a job's status (through
// Redis, or a master's API): it reads it every interval until done says
// so or ctx ends, and stops at an error that is ErrJobNotFound or
// ErrRefused; others (a server away) are read through again.
func Follow(ctx context.Context, job string, read func(context.Context, string) (*Status, error), interval time.Duration,
	progress func(*Status), done func(*Status) bool) (*Status, error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last *Status
	for {
		st, err := read(ctx, job)
		if errors.Is(err, ErrJobNotFound) || errors.Is(err, ErrRefused) {
			return nil, err
		}
		if err == nil {
			last = st
			if progress != nil {
				progress(st)
			}
			if done(st) {
				return st, nil
			}
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("wait for job %s: %w", job, ctx.Err())
		case <-t.C:
		}
	}
}

// sinkCounts gathers the per-sink counters ("sink:s3:accepted"); nil
// when the job's slaves have no sink.
func sinkCounts(stats map[string]string) map[string]SinkCounts {
	var out map[string]SinkCounts
	for k, v := range stats {
		name, result, ok := cluster.ParseSinkStat(k)
		if !ok {
			continue
		}
		if out == nil {
			out = map[string]SinkCounts{}
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		sc := out[name]
		switch result {
		case cluster.SinkAccepted:
			sc.Accepted = n
		case cluster.SinkRetried:
			sc.Retried = n
		case cluster.SinkRefused:
			sc.Refused = n
		}
		out[name] = sc
	}
	return out
}
