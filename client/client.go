package client

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// Options configure a Client: which cluster in its Redis it drives.
type Options struct {
	// Keys names the cluster's keys (its prefix), as its masters and
	// slaves use them.
	Keys cluster.Keys
	// MaxSlaves is the size of the cluster's virtual node table, to find
	// every slave's queue; 0 means cluster.DefaultMaxSlaves.
	MaxSlaves int
}

// Client drives one cluster through its Redis: it submits, watches,
// cancels, retries and resets jobs. It holds no state of its own but the
// connection, which its caller closes; it is safe for concurrent use.
type Client struct {
	rdb       redis.UniversalClient
	keys      cluster.Keys
	maxSlaves int
}

// New returns a Client of the cluster opts names in rdb.
func New(rdb redis.UniversalClient, opts Options) (*Client, error) {
	if opts.MaxSlaves == 0 {
		opts.MaxSlaves = cluster.DefaultMaxSlaves
	}
	if err := cluster.CheckMaxSlaves(opts.MaxSlaves); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &Client{rdb: rdb, keys: opts.Keys, maxSlaves: opts.MaxSlaves}, nil
}
