package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/master"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/sink"
	"github.com/crawler-dev/crawler/slave"
	"github.com/crawler-dev/crawler/store"
)

// sinkFlags is --sink, repeatable: the places items go beside the store.
type sinkFlags struct{ uris []string }

func (s *sinkFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&s.uris, "sink", nil,
		"also send items and failures here (repeatable): postgres://USER:PASS@HOST/DB[?table=items], warc:DIR[?max_size=1GiB], kafka://HOST:9092[,HOST:9092]/TOPIC, s3://BUCKET/PREFIX[?endpoint=HOST:PORT]; a task is acknowledged once every sink took its item (docs/sinks.md)")
}

// validate parses every URI, so a typo fails before anything connects.
func (s *sinkFlags) validate() error {
	var errs []error
	for _, u := range s.uris {
		if _, err := sink.Parse(u); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// open connects to every sink; none stays open when one fails.
func (s *sinkFlags) open(ctx context.Context, reg *metrics.Registry, log *zap.Logger) (*sink.Fanout, error) {
	var sinks []sink.Sink
	var specs []sink.Spec
	for _, u := range s.uris {
		sk, spec, err := sink.Open(ctx, u, log)
		if err != nil {
			for _, open := range sinks {
				_ = open.Close()
			}
			return nil, err
		}
		sinks, specs = append(sinks, sk), append(specs, spec)
	}
	return sink.NewFanout(sinks, specs, reg.Sinks(), log), nil
}

// slaveSinks is what a slave's Deps.Sinks gets: nil without sinks.
func slaveSinks(f *sink.Fanout) slave.Sinks {
	if f.Len() == 0 {
		return nil
	}
	return f
}

// masterFailures records the master's failures in the store, then in
// the sinks.
func masterFailures(st master.FailureRecorder, f *sink.Fanout) master.FailureRecorder {
	if f.Len() == 0 {
		return st
	}
	return failureSinks{st, f}
}

// failureSinks is a store's failure records, copied to the sinks.
type failureSinks struct {
	master.FailureRecorder
	sinks *sink.Fanout
}

// SaveFailure records fl in the store, then in every sink.
func (f failureSinks) SaveFailure(ctx context.Context, fl store.Failure) error {
	if err := f.FailureRecorder.SaveFailure(ctx, fl); err != nil {
		return err
	}
	return f.sinks.PutFailure(ctx, fl)
}

// closeSinks closes the sinks, logging what they could not flush.
func closeSinks(f *sink.Fanout, log *zap.Logger) {
	if err := f.Close(); err != nil {
		log.Error("close sinks", zap.Error(err))
	}
}

// sinkCountEvery is how often a process adds what its sinks did to the
// jobs' status.
const sinkCountEvery = time.Second

// sinkCounter adds what the sinks did with each job's records (accepted,
// retried, refused, by sink scheme) to the job's counters, which client
// status shows as "sinks": every sinkCountEvery while it runs, and on
// flush. Counts that could not be added are kept for the next try.
type sinkCounter struct {
	sinks *sink.Fanout
	rdb   redis.UniversalClient
	keys  cluster.Keys
	log   *zap.Logger

	mu      sync.Mutex
	pending sink.JobCounts
}

func newSinkCounter(f *sink.Fanout, rdb redis.UniversalClient, keys cluster.Keys, log *zap.Logger) *sinkCounter {
	return &sinkCounter{sinks: f, rdb: rdb, keys: keys, log: log, pending: sink.JobCounts{}}
}

// run flushes every sinkCountEvery until ctx ends; without sinks it has
// nothing to do.
func (c *sinkCounter) run(ctx context.Context) error {
	if c.sinks.Len() == 0 {
		return nil
	}
	t := time.NewTicker(sinkCountEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := c.flush(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("count sink records in the jobs' status; trying again", zap.Error(err))
			}
		}
	}
}

// flush adds the counts taken since the last flush to the jobs' counters.
func (c *sinkCounter) flush(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending.Merge(c.sinks.TakeCounts())
	var errs []error
	for job, counts := range c.pending {
		if err := ledger.New(c.rdb, c.keys.Job(job)).AddSinkCounts(ctx, counts); err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", job, err))
			continue
		}
		delete(c.pending, job)
	}
	return errors.Join(errs...)
}

// flushLast adds what is left when the process stops, logging a failure.
func (c *sinkCounter) flushLast(ctx context.Context) {
	if c.sinks.Len() == 0 {
		return
	}
	if err := c.flush(context.WithoutCancel(ctx)); err != nil {
		c.log.Warn("count sink records in the jobs' status", zap.Error(err))
	}
}
