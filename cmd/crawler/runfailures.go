package main

import (
	"context"
	"sync"

	"github.com/crawler-dev/crawler/store"
)

// runFailures is a run's items file with a tally of the failures this
// run recorded, by reason. The file keeps a page's first failure record
// only, so a page that failed in an earlier run sharing -o has no record
// of this run's failure there: the summary counts them here.
type runFailures struct {
	*store.File
	mu      sync.Mutex
	reasons map[string]float64
}

func newRunFailures(f *store.File) *runFailures {
	return &runFailures{File: f, reasons: map[string]float64{}}
}

// SaveFailure records f in the file and counts it.
func (r *runFailures) SaveFailure(ctx context.Context, f store.Failure) error {
	err := r.File.SaveFailure(ctx, f)
	if err == nil {
		r.mu.Lock()
		r.reasons[reasonOf(f)]++
		r.mu.Unlock()
	}
	return err
}

// counts returns a copy of the tally.
func (r *runFailures) counts() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]float64, len(r.reasons))
	for k, v := range r.reasons {
		out[k] = v
	}
	return out
}
