package client

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/membership"
)

// WaitSlaves waits until at least n slaves are live in the node table.
// Submitting after it makes a fast crawl spread over all of them: the
// master routes to the slaves live at the moment it routes.
func WaitSlaves(ctx context.Context, rdb redis.UniversalClient, keys cluster.Keys, n int) error {
	reg, err := membership.New(rdb, keys, membership.Options{})
	if err != nil {
		return err
	}
	for {
		t, err := reg.Snapshot(ctx)
		if err == nil && len(t.Nodes) >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %d slaves to register: %w", n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
