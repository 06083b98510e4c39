package master

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/store"
)

// DefaultMaxWeight is the default weight scale: twice the default slave
// weight (its default concurrency, 32), so slaves of up to 64 fetchers are
// weighted in proportion.
const DefaultMaxWeight = 64

// Options configures a Master. Zero values take the defaults.
type Options struct {
	// ID names this master in job leases and logs; default host:pid.
	ID string
	// ListConcurrency is how many list pages one job fetches at once.
	ListConcurrency int
	// MaxSlaves is a, the size of the virtual node table.
	MaxSlaves int
	// AssignMode is the assigner's second level: rendezvous or paper.
	AssignMode string
	// MaxWeight is the assigner's weight scale: a slave of this weight keeps
	// every URL of its own slot, a lighter one a proportional part; heavier
	// weights count as MaxWeight. Every master must use the same value.
	MaxWeight float64
	// JobLease is how long a job stays owned without renewal.
	JobLease time.Duration
	// ListLease is how long a list page may be in progress before another
	// master (or this one, restarted) fetches it again.
	ListLease time.Duration
	// Tick is how often jobs are scanned, leases renewed, lapsed work
	// reclaimed and completion checked.
	Tick time.Duration
	// Fetch configures the list-page fetcher.
	Fetch fetch.Options
}

func (o *Options) applyDefaults() {
	if o.ID == "" {
		host, _ := os.Hostname()
		o.ID = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if o.ListConcurrency <= 0 {
		o.ListConcurrency = 4
	}
	if o.MaxSlaves <= 0 {
		o.MaxSlaves = cluster.DefaultMaxSlaves
	}
	if o.AssignMode == "" {
		o.AssignMode = "rendezvous"
	}
	if o.MaxWeight <= 0 {
		o.MaxWeight = DefaultMaxWeight
	}
	if o.JobLease <= 0 {
		o.JobLease = 10 * time.Second
	}
	if o.ListLease <= 0 {
		o.ListLease = 2 * time.Minute
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
}

// Validate reports the first bad option, naming it.
func (o Options) Validate() error {
	switch {
	case o.MaxSlaves < 0 || o.MaxSlaves > 4096:
		return fmt.Errorf("max-slaves: %d is outside 1..4096", o.MaxSlaves)
	case o.ListConcurrency < 0:
		return fmt.Errorf("list-concurrency: %d is negative", o.ListConcurrency)
	case o.AssignMode != "" && o.AssignMode != "rendezvous" && o.AssignMode != "paper":
		return fmt.Errorf("assign-mode: %q is not rendezvous or paper", o.AssignMode)
	case o.MaxWeight < 0:
		return fmt.Errorf("max-weight: %g is negative", o.MaxWeight)
	case o.JobLease != 0 && o.JobLease < time.Second:
		return fmt.Errorf("job-lease: %s is shorter than 1s", o.JobLease)
	}
	return nil
}

// FailureRecorder keeps pages that could not be fetched.
type FailureRecorder interface {
	SaveFailure(ctx context.Context, f store.Failure) error
}

// Deps are the master's connections.
type Deps struct {
	// Redis is where the cluster meets.
	Redis redis.UniversalClient
	// Keys names the cluster's Redis keys.
	Keys cluster.Keys
	// Failures records list pages that could not be fetched.
	Failures FailureRecorder
	// Logger is nil for no logging.
	Logger *zap.Logger
}

func (d Deps) validate() error {
	if d.Redis == nil {
		return errors.New("master: no Redis client")
	}
	if d.Failures == nil {
		return errors.New("master: no failure recorder")
	}
	return nil
}
