package notify

import (
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
)

// Options configure a Notifier. Start from DefaultOptions; Validate names
// the first field out of range.
type Options struct {
	// AllowPrivateNetworks lets webhooks reach loopback and private
	// addresses (a receiver on the masters' own network, or a test's on
	// 127.0.0.1); link-local and cloud-metadata addresses stay refused.
	// A job's allow_private_networks does not extend to its webhooks: the
	// operator decides where the masters may POST.
	AllowPrivateNetworks bool
	// Tries bounds the requests sent for one event to one webhook.
	Tries int
	// FirstBackoff is the wait after the first failed request; each next
	// wait is 1.5 times longer (with jitter), MaxBackoff at most.
	FirstBackoff time.Duration
	MaxBackoff   time.Duration
	// MaxElapsed bounds the time spent on one event for one webhook,
	// waits included.
	MaxElapsed time.Duration
	// Timeout bounds one request.
	Timeout time.Duration
	// Lease is how long an event taken from an outbox stays this master's
	// to send; another master takes it over after that. It must exceed
	// twice MaxElapsed plus Timeout: an event may wait for one send
	// before its own.
	Lease time.Duration
	// Workers is how many events are sent at once; as many more wait,
	// taken from their outboxes (the rest wait in Redis).
	Workers int
	// Tick is how often the jobs' version is read: a changed version (a
	// round finished, a job cancelled) makes the outboxes be looked at.
	Tick time.Duration
	// Scan is how often every job's outbox is looked at when the version
	// does not change: for the events of a master that died, whose lease
	// (minutes) lapses unannounced. A sweep costs two commands per job in
	// one round trip.
	Scan time.Duration
	// MaxDeliveries is how many times an event is taken before it is
	// given up on (its senders kept dying with it).
	MaxDeliveries int
}

// DefaultOptions returns the options a master runs with.
func DefaultOptions() Options {
	return Options{Tries: 5, FirstBackoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second,
		MaxElapsed: 2 * time.Minute, Timeout: 10 * time.Second, Lease: 5 * time.Minute, Workers: 4,
		Tick: time.Second, Scan: 30 * time.Second, MaxDeliveries: 5}
}

// Validate names the first option out of range.
func (o Options) Validate() error {
	switch {
	case o.Tries < 1 || o.Tries > 100:
		return cluster.Invalid("Tries", o.Tries, "is outside 1..100")
	case o.FirstBackoff <= 0:
		return cluster.Invalid("FirstBackoff", o.FirstBackoff, "is not positive")
	case o.MaxBackoff < o.FirstBackoff:
		return cluster.Invalid("MaxBackoff", o.MaxBackoff, "is shorter than FirstBackoff %s", o.FirstBackoff)
	case o.Timeout <= 0:
		return cluster.Invalid("Timeout", o.Timeout, "is not positive")
	case o.MaxElapsed < o.Timeout:
		return cluster.Invalid("MaxElapsed", o.MaxElapsed, "is shorter than Timeout %s", o.Timeout)
	case o.Lease <= 2*(o.MaxElapsed+o.Timeout):
		return cluster.Invalid("Lease", o.Lease, "must exceed twice MaxElapsed + Timeout (%s)", 2*(o.MaxElapsed+o.Timeout))
	case o.Workers < 1:
		return cluster.Invalid("Workers", o.Workers, "is not positive")
	case o.Tick <= 0:
		return cluster.Invalid("Tick", o.Tick, "is not positive")
	case o.Scan < o.Tick:
		return cluster.Invalid("Scan", o.Scan, "is shorter than Tick %s", o.Tick)
	case o.MaxDeliveries < 1:
		return cluster.Invalid("MaxDeliveries", o.MaxDeliveries, "is not positive")
	}
	return nil
}

// Deps are what a Notifier works with.
type Deps struct {
	Redis redis.UniversalClient
	Keys  cluster.Keys
	// Secret signs every request.
	Secret *Secret
	// Logger is the master's (nil: none).
	Logger *zap.Logger
}

func (d Deps) validate() error {
	switch {
	case d.Redis == nil:
		return errors.New("notify: no Redis client")
	case d.Secret == nil:
		return errors.New("notify: no webhook secret")
	}
	return nil
}
