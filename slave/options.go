package slave

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/store"
)

// Options configures a Slave. Zero values take the defaults, except ID.
type Options struct {
	// ID is the slave's stable identity, 0 <= ID < MaxSlaves.
	ID int
	// Concurrency is how many pages it fetches at once. Default 32.
	Concurrency int
	// Weight is its capacity relative to other slaves; default Concurrency.
	Weight float64
	// MaxSlaves is a, the size of the virtual node table.
	MaxSlaves int
	// Lease is the heartbeat lease of its place in the node table.
	Lease time.Duration
	// TaskLease is how long a task may be held without renewal before the
	// master hands it out again.
	TaskLease time.Duration
	// Poll is how long it waits when every queue is empty.
	Poll time.Duration
	// DrainTimeout bounds how long shutdown waits for pages in progress
	// before handing them back.
	DrainTimeout time.Duration
	// Fetch configures the fetcher.
	Fetch fetch.Options
}

func (o *Options) applyDefaults() {
	if o.Concurrency <= 0 {
		o.Concurrency = 32
	}
	if o.Weight <= 0 {
		o.Weight = float64(o.Concurrency)
	}
	if o.MaxSlaves <= 0 {
		o.MaxSlaves = cluster.DefaultMaxSlaves
	}
	if o.TaskLease <= 0 {
		o.TaskLease = time.Minute
	}
	if o.Poll <= 0 {
		o.Poll = 200 * time.Millisecond
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 10 * time.Second
	}
}

// Validate reports the first bad option, naming it.
func (o Options) Validate() error {
	maxSlaves := o.MaxSlaves
	if maxSlaves <= 0 {
		maxSlaves = cluster.DefaultMaxSlaves
	}
	switch {
	case o.ID < 0 || o.ID >= maxSlaves:
		return fmt.Errorf("id: %d is outside 0..%d (max-slaves %d)", o.ID, maxSlaves-1, maxSlaves)
	case o.Concurrency < 0 || o.Concurrency > 10000:
		return fmt.Errorf("concurrency: %d is outside 1..10000", o.Concurrency)
	case o.Weight < 0:
		return fmt.Errorf("weight: %g is negative", o.Weight)
	case o.TaskLease != 0 && o.TaskLease < time.Second:
		return fmt.Errorf("task-lease: %s is shorter than 1s", o.TaskLease)
	}
	return nil
}

// ItemStore keeps items and failures. Writes must be idempotent by ID.
type ItemStore interface {
	SaveItem(ctx context.Context, it store.Item) error
	SaveFailure(ctx context.Context, f store.Failure) error
	// DeleteFailure drops the failure record of a page stored on retry.
	DeleteFailure(ctx context.Context, id string) error
}

// Deps are the slave's connections.
type Deps struct {
	// Redis is where the cluster meets.
	Redis redis.UniversalClient
	// Keys names the cluster's Redis keys.
	Keys cluster.Keys
	// Store receives items and failures.
	Store ItemStore
	// Logger is nil for no logging.
	Logger *zap.Logger
}

func (d Deps) validate() error {
	if d.Redis == nil {
		return errors.New("slave: no Redis client")
	}
	if d.Store == nil {
		return errors.New("slave: no item store")
	}
	return nil
}
