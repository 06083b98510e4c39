package slave

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/membership"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/queue"
	"github.com/crawler-dev/crawler/render"
	"github.com/crawler-dev/crawler/sink"
	"github.com/crawler-dev/crawler/store"
)

// Options configures a Slave. Start from DefaultOptions and set ID: every
// field must be set; Validate names the first one out of range.
type Options struct {
	// ID is the slave's stable identity, 0 <= ID < MaxSlaves.
	ID int
	// Concurrency is how many pages it fetches at once.
	Concurrency int
	// Weight is its capacity relative to other slaves; 0 means Concurrency.
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
	// PriorityAging is how long a job, or a band of a job's queue, waits
	// to gain one priority: a job (or band) one below the highest is
	// served at least once every PriorityAging, one ten below once every
	// ten, so none starves (docs/job-file.md, "Priority").
	PriorityAging time.Duration
	// DrainTimeout bounds how long shutdown waits for pages in progress
	// before handing them back.
	DrainTimeout time.Duration
	// MaxDeliveries is how many times a task's fetch may begin without an
	// outcome before it is dead-lettered: recorded as failed with the
	// reason its last holder gave up, so one poison task cannot keep a job
	// running. A delivery whose holder died before the fetch began does
	// not count, and a task whose page an earlier delivery stored gets up
	// to twice as many (storedGrace).
	MaxDeliveries int
	// MaxParked bounds the tasks held beyond the 4 × Concurrency kept for
	// the fetchers while they wait long (downloader.Downloader.Parked): a
	// paused or slow host's, ones waiting out a Retry-After or for their
	// robots.txt. Up to MaxParked of them do not count against the tasks
	// kept for the fetchers, so one slow or paused host cannot stop the
	// slave taking other hosts' tasks; past it they count again, which
	// bounds the memory held (about 1 KiB a task). 0 counts them all.
	MaxParked int
	// MaxMemory is the memory the slave aims to stay within: half of it
	// bounds the pages held at once (fetched and not yet extracted), the
	// rest is for everything else. 0 means no bound.
	MaxMemory int64
	// Fetch configures the fetcher; its MemoryBudget comes from MaxMemory.
	Fetch fetch.Options
	// Download configures the downloader (retries, the default rate per
	// host); its Workers is Concurrency.
	Download downloader.Options
}

// DefaultConcurrency is how many pages a slave fetches at once by default.
// A crawl of many polite hosts is bound by latency: at the job file's
// defaults (5 requests/s per host) and 100ms per answer, 120 hosts on 3
// slaves need about 60 requests on the wire at once, in bursts as the
// hosts' turns come together. At 32 a slave's workers were all busy at
// those bursts, and a host's turn that came while its request waited for
// a worker was lost to every process (up to one in ten; 0.55–0.8 of the
// politeness bound). What pages cost in memory while they are fetched is
// bounded apart when asked (Options.MaxMemory), not by this.
const DefaultConcurrency = 64

// DefaultMaxParked is how many long-waiting tasks a slave holds by default
// beyond those kept for its fetchers.
const DefaultMaxParked = 4096

// DefaultMaxMemory is the memory a slave aims to stay within by default.
const DefaultMaxMemory = 256 << 20

// DefaultOptions returns the options a slave runs with unless told
// otherwise (ID 0).
func DefaultOptions() Options {
	return Options{
		Concurrency:   DefaultConcurrency,
		MaxSlaves:     cluster.DefaultMaxSlaves,
		Lease:         membership.DefaultLease,
		TaskLease:     time.Minute,
		Poll:          200 * time.Millisecond,
		PriorityAging: queue.DefaultAging,
		DrainTimeout:  10 * time.Second,
		MaxDeliveries: 5,
		MaxParked:     DefaultMaxParked,
		MaxMemory:     DefaultMaxMemory,
		Fetch:         fetch.DefaultOptions(),
		Download:      downloader.DefaultOptions(),
	}
}

// weight is the slave's routing weight.
func (o Options) weight() float64 {
	if o.Weight == 0 {
		return float64(o.Concurrency)
	}
	return o.Weight
}

// Validate reports the first option out of range, as a *cluster.FieldError.
func (o Options) Validate() error {
	switch {
	case cluster.CheckMaxSlaves(o.MaxSlaves) != nil:
		return cluster.CheckMaxSlaves(o.MaxSlaves)
	case o.ID < 0 || o.ID >= o.MaxSlaves:
		return cluster.Invalid("ID", o.ID, "is outside 0..%d (max slaves %d)", o.MaxSlaves-1, o.MaxSlaves)
	case o.Concurrency < 1 || o.Concurrency > 10000:
		return cluster.Invalid("Concurrency", o.Concurrency, "is outside 1..10000")
	case o.Weight < 0 || math.IsNaN(o.Weight) || math.IsInf(o.Weight, 0):
		return cluster.Invalid("Weight", o.Weight, "must be a positive number (0: the concurrency)")
	case o.Lease < 100*time.Millisecond:
		return cluster.Invalid("Lease", o.Lease, "is shorter than 100ms")
	case o.TaskLease < time.Second:
		return cluster.Invalid("TaskLease", o.TaskLease, "is shorter than 1s")
	case o.Poll < time.Millisecond:
		return cluster.Invalid("Poll", o.Poll, "is shorter than 1ms")
	case o.PriorityAging < 10*time.Millisecond:
		return cluster.Invalid("PriorityAging", o.PriorityAging, "is shorter than 10ms")
	case o.DrainTimeout < 0:
		return cluster.Invalid("DrainTimeout", o.DrainTimeout, "is negative")
	case o.MaxMemory < 0 || (o.MaxMemory > 0 && o.MaxMemory < 16<<20):
		return cluster.Invalid("MaxMemory", o.MaxMemory, "must be 0 (no bound) or at least 16 MiB")
	case o.MaxDeliveries < 1:
		return cluster.Invalid("MaxDeliveries", o.MaxDeliveries, "must be at least 1")
	case o.MaxParked < 0 || o.MaxParked > 1_000_000:
		return cluster.Invalid("MaxParked", o.MaxParked, "is outside 0..1000000")
	}
	return nil
}

// ItemStore keeps items and failures (store.Mongo, store.File): it says
// what it holds of a batch of pages before they are fetched (their
// validators, content hash and version), and records a batch of visits,
// saying what each found (new, changed, unchanged, not modified). A
// re-fetch is then conditional, and only a new or changed page is written
// in full. Writes must be idempotent by ID.
type ItemStore interface {
	Validators(ctx context.Context, ids []string) (map[string]store.Stored, error)
	SaveVisits(ctx context.Context, now time.Time, visits []store.Visit) []store.VisitResult
	SaveFailure(ctx context.Context, f store.Failure) error
	// DeleteFailure drops the failure record of a page stored on retry.
	DeleteFailure(ctx context.Context, id string) error
}

// Sinks are where items go beside the store (sink.Fanout). Put returns
// once every sink took each record, or refused it, or ctx ended.
// KeepsExchanges says whether a sink archives what went over the wire
// (sink.Record.Exchange): only then does the slave keep it.
type Sinks interface {
	Put(ctx context.Context, recs []sink.Record) []error
	PutFailure(ctx context.Context, f store.Failure) error
	KeepsExchanges() bool
}

// Deps are the slave's connections.
type Deps struct {
	// Redis is where the cluster meets.
	Redis redis.UniversalClient
	// Keys names the cluster's Redis keys.
	Keys cluster.Keys
	// Store receives items and failures.
	Store ItemStore
	// Sinks receive items and failures beside the store; a task is
	// acknowledged once every sink took its item. nil: none.
	Sinks Sinks
	// Metrics records the slave's requests; nil records nothing.
	Metrics *metrics.Registry
	// Renderer renders the pages of kinds that say render (one browser
	// per process); nil fails them with a clear reason.
	Renderer *render.Renderer
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
