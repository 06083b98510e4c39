package api

import (
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/store"
)

// Prefix is the path the API is served under.
const Prefix = "/api/v1/"

// Options configure the API.
type Options struct {
	// MaxBody bounds a request's body (a job file); a larger one is
	// refused with 413. Default 10 MiB.
	MaxBody int64
	// Timeout bounds one call's work in Redis (the items stream is bounded
	// by its client instead). Default 30s.
	Timeout time.Duration
	// MaxFailures failed authentications from one address within
	// FailureWindow make it wait, with 429, until the window ends.
	// Defaults 10 and 1 minute.
	MaxFailures   int
	FailureWindow time.Duration
	// Logger receives the API's own failures; nil means none. Tokens are
	// never logged.
	Logger *zap.Logger
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{MaxBody: 10 << 20, Timeout: 30 * time.Second, MaxFailures: 10, FailureWindow: time.Minute}
}

// Validate names the first option out of range.
func (o Options) Validate() error {
	switch {
	case o.MaxBody < 1<<10 || o.MaxBody > jobspec.MaxJobFileBytes:
		return cluster.Invalid("MaxBody", o.MaxBody, "is outside 1KiB..%d", jobspec.MaxJobFileBytes)
	case o.Timeout < time.Millisecond:
		return cluster.Invalid("Timeout", o.Timeout, "is below 1ms")
	case o.MaxFailures < 1:
		return cluster.Invalid("MaxFailures", o.MaxFailures, "is below 1")
	case o.FailureWindow < time.Second:
		return cluster.Invalid("FailureWindow", o.FailureWindow, "is below 1s")
	}
	return nil
}

// Deps are what the API drives.
type Deps struct {
	// Client drives the cluster's jobs in Redis.
	Client *client.Client
	// Items reads items and failures; nil when the cluster writes JSON
	// Lines files instead of MongoDB (then items and retry-failed answer
	// 501).
	Items *store.Mongo
	// Tokens are the bearer tokens; nil: no token file, the API is
	// read-only and answers loopback callers only.
	Tokens *Tokens
}

// API serves /api/v1/.
type API struct {
	deps    Deps
	opts    Options
	log     *zap.Logger
	limiter *failureLimiter
	mux     *http.ServeMux
}

// maxLimitedAddrs bounds the addresses the failure limiter remembers.
const maxLimitedAddrs = 10000

// New returns the API over deps.
func New(deps Deps, opts Options) (*API, error) {
	if deps.Client == nil {
		return nil, errors.New("api: client is nil")
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	a := &API{deps: deps, opts: opts, log: log.Named("api"),
		limiter: newFailureLimiter(opts.MaxFailures, opts.FailureWindow, maxLimitedAddrs)}
	a.mux = a.routes()
	return a, nil
}

// ServeHTTP serves a request under Prefix.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mux.ServeHTTP(w, r)
}
