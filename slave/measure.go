package slave

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/store"
)

// measuredExtract is extractItem, timed in crawler_extract_duration_seconds
// by result; a page past its work budget also counts in
// crawler_failures_total{kind="extract_limit"}.
func (s *Slave) measuredExtract(ctx context.Context, w *work, page *fetch.Page) (store.Item, string, error) {
	began := time.Now()
	item, found, err := s.extractItem(ctx, w, page)
	node := s.deps.Metrics.Node(metrics.RoleSlave, s.opts.ID)
	result := metrics.ExtractOK
	switch {
	case errors.Is(err, extract.ErrLimit):
		result = metrics.ExtractLimit
		node.Failed(extract.FailureLimit)
	case err != nil:
		result = metrics.ExtractError
	}
	node.Extracted(time.Since(began), result)
	if err != nil {
		err = &answeredError{status: page.Status, err: err}
	}
	return item, found, err
}

// ewma is a duration smoothed over recent observations (each weighs an
// eighth), safe for concurrent use; zero until the first.
type ewma struct{ ns atomic.Int64 }

// add folds d in.
func (e *ewma) add(d time.Duration) {
	for {
		old := e.ns.Load()
		next := int64(d)
		if old != 0 {
			next = old + (int64(d)-old)/8
		}
		if e.ns.CompareAndSwap(old, next) {
			return
		}
	}
}

// get is the smoothed duration.
func (e *ewma) get() time.Duration { return time.Duration(e.ns.Load()) }
