package client

import (
	"context"
	"fmt"
	"time"

	"github.com/crawler-dev/crawler/membership"
)

// WaitSlaves waits until at least n slaves are live in the node table.
// Submitting after it makes a fast crawl spread over all of them: the
// master routes to the slaves live at the moment it routes.
func (c *Client) WaitSlaves(ctx context.Context, n int) error {
	reg, err := membership.New(c.rdb, c.keys, membership.Options{})
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

// Crew is who serves a cluster, as a client can tell from Redis.
type Crew struct {
	// MasterRan is true once a master has run under the cluster's prefix
	// (it records the cluster's routing config).
	MasterRan bool
	// Slaves is how many slaves are live.
	Slaves int
	// Renderers is how many of them can render (they have a browser).
	Renderers int
}

// Crew reads who serves the cluster: a submission to a Redis or prefix
// that no master serves would wait silently.
func (c *Client) Crew(ctx context.Context) (Crew, error) {
	n, err := c.rdb.Exists(ctx, c.keys.Nodes().Config()).Result()
	if err != nil {
		return Crew{}, fmt.Errorf("read the cluster's config: %w", err)
	}
	reg, err := membership.New(c.rdb, c.keys, membership.Options{})
	if err != nil {
		return Crew{}, err
	}
	t, err := reg.Snapshot(ctx)
	if err != nil {
		return Crew{}, fmt.Errorf("read the node table: %w", err)
	}
	return Crew{MasterRan: n > 0, Slaves: len(t.Nodes), Renderers: len(t.Renderers().Nodes)}, nil
}
