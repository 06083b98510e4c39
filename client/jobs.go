package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/ledger"
)

// Jobs reads the status of every submitted job, oldest submission first.
func (c *Client) Jobs(ctx context.Context) ([]*Status, error) {
	names, err := c.rdb.ZRange(ctx, c.keys.Jobs(), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	out := make([]*Status, 0, len(names))
	for _, name := range names {
		st, err := c.Status(ctx, name)
		if errors.Is(err, ErrJobNotFound) {
			continue // indexed by a submission still being written
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// ErrJobFinished is returned when cancelling a job that is not running.
var ErrJobFinished = errors.New("the job is finished")

// Cancel asks the master that owns the job to stop it: it stops walking
// the list pages, drops the tasks still queued (counted as cancelled) and
// marks the job finished once the requests already on the wire are
// finished by their slaves (or dropped, should their lease lapse). Slaves
// learn of it within a second or two and hand back the tasks they hold but
// have not sent, which are dropped too: a host paused for an hour does not
// hold the cancel up. A pending job that
// no master holds (none runs, or none under this key prefix) is finished
// here at once, so it can be reset or submitted again: finished reports
// that.
func (c *Client) Cancel(ctx context.Context, job string) (finished bool, err error) {
	n, err := ledger.New(c.rdb, c.keys.Job(job)).AskCancel(ctx, time.Now())
	switch {
	case err != nil:
		return false, fmt.Errorf("cancel job %s: %w", job, err)
	case n == ledger.CancelNoJob:
		return false, fmt.Errorf("cancel job %s: %w", job, ErrJobNotFound)
	case n == ledger.CancelFinishedAlready:
		return false, fmt.Errorf("cancel job %s: %w", job, ErrJobFinished)
	}
	c.bumpJobs(ctx)
	return n == ledger.CancelFinished, nil
}

// ErrJobBusy is returned when resetting a job that is pending, running or
// paused.
var ErrJobBusy = errors.New("the job is pending, running or paused; cancel it first")

// Reset forgets a job that is not running: its spec, state, counters,
// seeds, dupefilter and near-duplicate index, so that submitting it again
// fetches every page afresh. Items and failures in the store are kept. It
// returns how many Redis keys it removed.
func (c *Client) Reset(ctx context.Context, job string) (int, error) {
	jk := c.keys.Job(job)
	state, err := c.rdb.HGet(ctx, jk.State(), cluster.StateField).Result()
	switch {
	case errors.Is(err, redis.Nil):
		if n, _ := c.rdb.ZScore(ctx, c.keys.Jobs(), job).Result(); n == 0 {
			return 0, fmt.Errorf("reset job %s: %w", job, ErrJobNotFound)
		}
	case err != nil:
		return 0, fmt.Errorf("reset job %s: %w", job, err)
	case state == cluster.StatePending || state == cluster.StateRunning || state == cluster.StatePaused:
		return 0, fmt.Errorf("reset job %s: %w", job, ErrJobBusy)
	}
	n, err := unlinkTag(ctx, c.rdb, jk.Tag())
	if err != nil {
		return n, fmt.Errorf("reset job %s: %w", job, err)
	}
	if err := c.rdb.ZRem(ctx, c.keys.Jobs(), job).Err(); err != nil {
		return n, fmt.Errorf("reset job %s: unindex: %w", job, err)
	}
	return n, nil
}

// unlinkTag removes every key under a hash tag. They share one slot, so on
// Redis Cluster they live on the node that serves it.
func unlinkTag(ctx context.Context, rdb redis.UniversalClient, tag string) (int, error) {
	var scanner redis.Cmdable = rdb
	if c, ok := rdb.(*redis.ClusterClient); ok {
		node, err := c.MasterForKey(ctx, tag)
		if err != nil {
			return 0, err
		}
		scanner = node
	}
	removed := 0
	iter := scanner.Scan(ctx, 0, escapeGlob(tag)+"*", 1000).Iterator()
	batch := make([]string, 0, 500)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		n, err := rdb.Unlink(ctx, batch...).Result()
		removed += int(n)
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return removed, err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return removed, err
	}
	return removed, flush()
}

// escapeGlob escapes the characters SCAN MATCH treats as a pattern.
func escapeGlob(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// PreviousRun is the job of that name that finished within its dupefilter
// window before now, or nil: its pages are still duplicates, so submitting
// it again fetches only what is new. window is the new submission's.
func (c *Client) PreviousRun(ctx context.Context, job string, window time.Duration) (*Status, error) {
	st, err := c.status(ctx, job, 0)
	if errors.Is(err, ErrJobNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	finished, err := time.Parse(time.RFC3339, st.FinishedAt)
	if st.State != cluster.StateFinished || err != nil || time.Since(finished) >= window {
		return nil, nil
	}
	return st, nil
}

// The errors of a pause or resume that changed nothing (the job ledger's
// sentinels): the job is being cancelled, is paused already, or is not
// paused.
var (
	ErrJobCancelling = ledger.ErrCancelling
	ErrJobPaused     = ledger.ErrPaused
	ErrJobNotPaused  = ledger.ErrNotPaused
)

// Pause pauses a job: its master stops taking list pages and starts no
// round, and its slaves stop taking its tasks and hand back those they
// hold but have not sent (uncounted); requests already sent finish and
// are counted as usual. Its queues keep their tasks, and client status
// says paused, until Resume. A job between scheduled rounds skips its
// rounds while paused. It returns the state the job was paused in.
func (c *Client) Pause(ctx context.Context, job string) (from string, err error) {
	from, err = ledger.New(c.rdb, c.keys.Job(job)).Pause(ctx, time.Now())
	if err != nil {
		return "", fmt.Errorf("pause job %s: %w", job, ledgerError(err))
	}
	c.bumpJobs(ctx)
	return from, nil
}

// Resume ends a job's pause and returns the state it goes back to; the
// job goes on from where it stopped. A job being cancelled is not resumed
// (ErrJobCancelling), and nothing changes.
func (c *Client) Resume(ctx context.Context, job string) (state string, err error) {
	state, err = ledger.New(c.rdb, c.keys.Job(job)).Resume(ctx)
	if err != nil {
		return "", fmt.Errorf("resume job %s: %w", job, ledgerError(err))
	}
	c.bumpJobs(ctx)
	return state, nil
}

// ledgerError is err with the ledger's sentinels for a job that does not
// exist or is finished turned into the client's own.
func ledgerError(err error) error {
	switch {
	case errors.Is(err, ledger.ErrNoJob):
		return ErrJobNotFound
	case errors.Is(err, ledger.ErrFinished):
		return ErrJobFinished
	}
	return err
}
