package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

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
