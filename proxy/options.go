package proxy

import (
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
)

// Options configures a Validator.
type Options struct {
	// Sources are proxy lists, files or http(s) URLs, one proxy per line.
	Sources []string
	// SourceInterval is how often the sources are read again. Default 10m.
	SourceInterval time.Duration
	// RefillInterval is how often the sources are read while the pool is
	// below MinSize. Default 30s.
	RefillInterval time.Duration
	// JudgeURL is the judge (see Judge) the checks go to through each
	// proxy. It must be reachable from the proxies. Empty with CheckURL
	// empty: the validator serves a judge on a loopback port itself,
	// which only proxies on this host can reach (tests, a single host).
	// With the judge on loopback, proxies not on loopback are not checked
	// (they could only fail): they wait with a reason saying which flag to
	// set, each round logs an error, and none is removed for it.
	JudgeURL string
	// CheckURL, when set, replaces the judge with a plain URL: a check
	// passes on a 2xx answer, and anonymity is not known.
	CheckURL string
	// CheckTimeout bounds one check. Default 10s.
	CheckTimeout time.Duration
	// Concurrency bounds the checks in flight. Default 64.
	Concurrency int
	// Recheck is how long a usable proxy waits for its next check (±10%
	// jitter). Default 5m.
	Recheck time.Duration
	// BackoffBase and BackoffMax bound the wait before a failing proxy is
	// checked again: BackoffBase doubling per failed round, at most
	// BackoffMax, with jitter. Defaults 1m and 30m.
	BackoffBase, BackoffMax time.Duration
	// MaxFailedRounds is how many failed checks in a row remove a proxy.
	// Default 3.
	MaxFailedRounds int
	// MaxSize caps the proxies tracked (new, usable and failing).
	// Default 1000.
	MaxSize int
	// MinSize is the usable count below which the sources are read every
	// RefillInterval. Default 20.
	MinSize int
	// MinAnonymity rejects proxies the judge finds less anonymous.
	// Default Anonymous (transparent proxies are rejected).
	MinAnonymity Anonymity
	// ProxyConcurrency is each proxy's cap on requests in flight.
	// Default 8.
	ProxyConcurrency int
	// Lease is the validator lease's TTL; only one validator runs across
	// masters. A round renews it every third of it, and its results are
	// recorded only while it holds it. It must exceed CheckTimeout.
	// Default 30s.
	Lease time.Duration
	// Tick is how often Run looks for due checks. Default 1s.
	Tick time.Duration
	// BreakerMinChecks and BreakerRatio open the circuit breaker when at
	// least BreakerMinChecks proxies usable lately (usable now, or evicted
	// by real traffic and not yet removed) are checked in one batch and at
	// least BreakerRatio of them fail. Defaults 5 and 0.9.
	BreakerMinChecks int
	BreakerRatio     float64
	// ProvenWindow is how long after its last passed check a proxy that is
	// no longer usable still counts towards the breaker: its failing then
	// hints at our network rather than at the proxy. Past it, the proxy is
	// judged on its own (and removed after MaxFailedRounds) even while the
	// breaker is open. Default 1h.
	ProvenWindow time.Duration
	// Graveyard is how long a removed proxy is remembered (listed with its
	// reason, and not admitted again from the sources). Default 24h.
	Graveyard time.Duration
	// HTTPClient reads http(s) sources; nil means a 30s-timeout client.
	HTTPClient *http.Client
	// Logger receives round summaries and the breaker's changes; nil
	// means none.
	Logger *zap.Logger
}

// DefaultOptions returns the defaults, with no sources.
func DefaultOptions() Options {
	return Options{
		SourceInterval: 10 * time.Minute, RefillInterval: 30 * time.Second,
		CheckTimeout: 10 * time.Second, Concurrency: 64, Recheck: 5 * time.Minute,
		BackoffBase: time.Minute, BackoffMax: 30 * time.Minute, MaxFailedRounds: 3,
		MaxSize: 1000, MinSize: 20, MinAnonymity: Anonymous, ProxyConcurrency: 8,
		Lease: 30 * time.Second, Tick: time.Second, BreakerMinChecks: 5, BreakerRatio: 0.9, ProvenWindow: time.Hour,
		Graveyard: 24 * time.Hour,
	}
}

// Validate names the first option out of range.
func (o Options) Validate() error {
	if err := o.validateURLs(); err != nil {
		return err
	}
	if err := o.validateTimes(); err != nil {
		return err
	}
	switch {
	case o.Concurrency < 1 || o.Concurrency > 10000:
		return cluster.Invalid("Concurrency", o.Concurrency, "is outside 1..10000")
	case o.MaxFailedRounds < 1:
		return cluster.Invalid("MaxFailedRounds", o.MaxFailedRounds, "is below 1")
	case o.MaxSize < 1:
		return cluster.Invalid("MaxSize", o.MaxSize, "is below 1")
	case o.MinSize < 0 || o.MinSize > o.MaxSize:
		return cluster.Invalid("MinSize", o.MinSize, "is outside 0..MaxSize (%d)", o.MaxSize)
	case o.MinAnonymity != Transparent && o.MinAnonymity != Anonymous && o.MinAnonymity != Elite:
		return cluster.Invalid("MinAnonymity", o.MinAnonymity, "is not transparent, anonymous or elite")
	case o.ProxyConcurrency < 1:
		return cluster.Invalid("ProxyConcurrency", o.ProxyConcurrency, "is below 1")
	case o.BreakerMinChecks < 1:
		return cluster.Invalid("BreakerMinChecks", o.BreakerMinChecks, "is below 1")
	case !(o.BreakerRatio > 0 && o.BreakerRatio <= 1):
		return cluster.Invalid("BreakerRatio", o.BreakerRatio, "is outside (0, 1]")
	}
	return nil
}

func (o Options) validateURLs() error {
	for _, s := range []struct{ name, v string }{{"JudgeURL", o.JudgeURL}, {"CheckURL", o.CheckURL}} {
		if s.v == "" {
			continue
		}
		if u, err := url.Parse(s.v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return cluster.Invalid(s.name, s.v, "is not an http(s) URL")
		}
	}
	if o.JudgeURL != "" && o.CheckURL != "" {
		return cluster.Invalid("CheckURL", o.CheckURL, "is set together with JudgeURL; give one")
	}
	return nil
}

func (o Options) validateTimes() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"SourceInterval", o.SourceInterval}, {"RefillInterval", o.RefillInterval},
		{"CheckTimeout", o.CheckTimeout}, {"Recheck", o.Recheck}, {"BackoffBase", o.BackoffBase}, {"ProvenWindow", o.ProvenWindow},
		{"Tick", o.Tick}, {"Graveyard", o.Graveyard}} {
		if d.v < time.Millisecond {
			return cluster.Invalid(d.name, d.v, "is below 1ms")
		}
	}
	switch {
	case o.BackoffMax < o.BackoffBase:
		return cluster.Invalid("BackoffMax", o.BackoffMax, "is below BackoffBase (%v)", o.BackoffBase)
	case o.Lease <= o.CheckTimeout:
		return cluster.Invalid("Lease", o.Lease, "must exceed CheckTimeout (%v)", o.CheckTimeout)
	}
	return nil
}
