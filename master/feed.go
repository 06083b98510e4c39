package master

import (
	"context"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/statuspage/feed"
	"github.com/crawler-dev/crawler/store"
)

// noteFailure publishes a failed list page for the status page.
func (r *jobRunner) noteFailure(ctx context.Context, f store.Failure) {
	if err := feed.New(r.m.deps.Redis, r.m.deps.Keys).Failure(ctx, f); err != nil {
		r.log.Debug("publish failure", zap.Error(err))
	}
}
