package slave

import (
	"context"
	"errors"
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
	return item, found, err
}
