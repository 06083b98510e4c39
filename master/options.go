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
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/render"
	"github.com/crawler-dev/crawler/sitemap"
	"github.com/crawler-dev/crawler/store"
)

// DefaultMaxWeight is the default weight scale: the default slave weight
// (its default concurrency, 64), so a slave on its defaults keeps every URL
// of its own slot, and slaves of fewer fetchers are weighted in
// proportion.
const DefaultMaxWeight = 64

// Options configures a Master. Start from DefaultOptions: every field must
// be set; Validate names the first one out of range.
type Options struct {
	// ID names this master in job leases and logs.
	ID string
	// ListConcurrency is the most list pages the master fetches at once,
	// and the most of one job's list pages in progress; how many go to one
	// host at once, and how fast, is up to the host's budget.
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
	// DedupMinBlockBits, when not 0, lays each bloom-mode job's dupefilter
	// slices out in blocks as small as fit (dedup.Options.MinBlockBits),
	// for a Redis that copies a whole string on every write. Every master
	// of a job must use the same.
	DedupMinBlockBits uint64
	// DedupCreateOnWrite makes each job's dupefilter create its blocks
	// on first write instead of ahead (dedup.Options.CreateOnWrite).
	DedupCreateOnWrite bool
	// DedupCache bounds the memory each bloom-mode job's dupefilter fills
	// with copies of its Redis slices (dedup.Options.CacheBytes): the
	// sealed slices are then checked in this process and only the current
	// one costs Redis work. 0 keeps no copies, as suits a Redis in this
	// process, whose slices already live here.
	DedupCache int64
	// MaxDeliveries is how many times a list page is taken without being
	// committed before it is given up on and recorded as failed.
	MaxDeliveries int
	// SitemapMaxBytes is how much of a sitemap is read, as sent: a longer
	// one is read that far (its first URLs) and logged as truncated. The
	// default is the sitemaps.org limit, sitemap.MaxBytes (50 MiB), whatever
	// a job's max_body_bytes.
	SitemapMaxBytes int64
	// MaxMemory bounds the list pages held at once (fetched, not yet
	// parsed and committed) to half of it; 0 means no bound.
	MaxMemory int64
	// Fetch configures the list-page fetcher; its MemoryBudget comes from
	// MaxMemory.
	Fetch fetch.Options
	// Download configures the downloader (retries, the default rate per
	// host); its Workers is ListConcurrency.
	Download downloader.Options
}

// DefaultOptions returns the options a master runs with unless told
// otherwise; its ID is host:pid.
func DefaultOptions() Options {
	host, _ := os.Hostname()
	return Options{
		ID:              fmt.Sprintf("%s:%d", host, os.Getpid()),
		ListConcurrency: 64,
		MaxSlaves:       cluster.DefaultMaxSlaves,
		AssignMode:      "rendezvous",
		MaxWeight:       DefaultMaxWeight,
		JobLease:        10 * time.Second,
		ListLease:       2 * time.Minute,
		Tick:            time.Second,
		MaxDeliveries:   5,
		MaxMemory:       256 << 20,
		SitemapMaxBytes: sitemap.MaxBytes,
		DedupCache:      dedup.DefaultCacheBytes,
		Fetch:           fetch.DefaultOptions(),
		Download:        listDownload(),
	}
}

// listLinger is how long the master keeps a host's slots its list pages
// no longer use: longer than the gap between two levels of a walk (a
// page parsed, its links committed, the next taken), short enough that
// the slaves have the slots back soon after the walk ends.
const listLinger = 500 * time.Millisecond

// listDownload is the downloader's defaults with the master's linger.
func listDownload() downloader.Options {
	o := downloader.DefaultOptions()
	o.HostLinger = listLinger
	return o
}

// Validate reports the first option out of range, as a *cluster.FieldError.
func (o Options) Validate() error {
	switch {
	case o.ID == "":
		return cluster.Invalid("ID", `""`, "is empty")
	case cluster.CheckMaxSlaves(o.MaxSlaves) != nil:
		return cluster.CheckMaxSlaves(o.MaxSlaves)
	case o.ListConcurrency < 1 || o.ListConcurrency > 10000:
		return cluster.Invalid("ListConcurrency", o.ListConcurrency, "is outside 1..10000")
	case o.AssignMode != "rendezvous" && o.AssignMode != "paper":
		return cluster.Invalid("AssignMode", fmt.Sprintf("%q", o.AssignMode), "is not rendezvous or paper")
	case !(o.MaxWeight > 0):
		return cluster.Invalid("MaxWeight", o.MaxWeight, "must be positive")
	case o.JobLease < time.Second:
		return cluster.Invalid("JobLease", o.JobLease, "is shorter than 1s")
	case o.ListLease < 2*time.Second:
		return cluster.Invalid("ListLease", o.ListLease, "is shorter than 2s")
	case o.Tick < time.Millisecond || o.Tick > o.JobLease/2:
		return cluster.Invalid("Tick", o.Tick, "must be at least 1ms and at most half the job lease %s", o.JobLease)
	case o.MaxMemory < 0 || (o.MaxMemory > 0 && o.MaxMemory < 16<<20):
		return cluster.Invalid("MaxMemory", o.MaxMemory, "must be 0 (no bound) or at least 16 MiB")
	case o.DedupCache < 0:
		return cluster.Invalid("DedupCache", o.DedupCache, "is negative")
	case o.SitemapMaxBytes < 1<<10:
		return cluster.Invalid("SitemapMaxBytes", o.SitemapMaxBytes, "is under 1 KiB")
	case o.MaxDeliveries < 1:
		return cluster.Invalid("MaxDeliveries", o.MaxDeliveries, "must be at least 1")
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
	// Metrics records the master's requests, queues and dupefilter; nil
	// records nothing.
	Metrics *metrics.Registry
	// Renderer renders the pages of kinds that say render (one browser
	// per process); nil fails them with a clear reason.
	Renderer *render.Renderer
	// OnJobState, when set, is told of each change of state the master
	// sees in a job it runs (paused, running again, finished); it is
	// called on the job's runner, so it must not block for long.
	OnJobState func(JobStateChange)
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
