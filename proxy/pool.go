package proxy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// Scoring constants shared by Report and the validator: each outcome moves
// a proxy's success rate and latency averages by scoreAlpha, and a proxy
// at scoreHalfLatency scores half of an instant one.
const (
	scoreAlpha       = 0.2
	scoreHalfLatency = time.Second
)

// PoolOptions configures a Pool.
type PoolOptions struct {
	// Best is how many of the best eligible proxies a pick chooses among,
	// weighted by score. Default 10.
	Best int
	// MaxScan bounds how far down the ranking a pick looks for eligible
	// proxies. Default 256.
	MaxScan int
	// ProxyConcurrency is a proxy's cap on requests in flight when the
	// validator recorded none. Default 8.
	ProxyConcurrency int
	// SlotLease is how long a picked proxy's slot is held without a
	// report (a crashed slave) before it lapses. Default 2m.
	SlotLease time.Duration
	// Cooldown is how long a proxy is not picked after a timeout.
	// Default 30s.
	Cooldown time.Duration
	// EvictAfterTimeouts is the streak of timeouts that evicts a proxy.
	// Default 3.
	EvictAfterTimeouts int
	// Ban is how long a proxy banned by a host stays off it when the
	// outcome names no duration. Default 10m.
	Ban time.Duration
	// RecheckAfterEvict is when the validator checks an evicted proxy
	// again. Default 30s.
	RecheckAfterEvict time.Duration
}

// DefaultPoolOptions returns the defaults.
func DefaultPoolOptions() PoolOptions {
	return PoolOptions{Best: 10, MaxScan: 256, ProxyConcurrency: 8, SlotLease: 2 * time.Minute,
		Cooldown: 30 * time.Second, EvictAfterTimeouts: 3, Ban: 10 * time.Minute,
		RecheckAfterEvict: 30 * time.Second}
}

// Validate names the first option out of range.
func (o PoolOptions) Validate() error {
	switch {
	case o.Best < 1 || o.Best > 1000:
		return cluster.Invalid("Best", o.Best, "is outside 1..1000")
	case o.MaxScan < o.Best:
		return cluster.Invalid("MaxScan", o.MaxScan, "is below Best (%d)", o.Best)
	case o.ProxyConcurrency < 1:
		return cluster.Invalid("ProxyConcurrency", o.ProxyConcurrency, "is below 1")
	case o.SlotLease < time.Second:
		return cluster.Invalid("SlotLease", o.SlotLease, "is below 1s")
	case o.Cooldown < 0:
		return cluster.Invalid("Cooldown", o.Cooldown, "is negative")
	case o.EvictAfterTimeouts < 1:
		return cluster.Invalid("EvictAfterTimeouts", o.EvictAfterTimeouts, "is below 1")
	case o.Ban < time.Millisecond:
		return cluster.Invalid("Ban", o.Ban, "is below 1ms")
	case o.RecheckAfterEvict < 0:
		return cluster.Invalid("RecheckAfterEvict", o.RecheckAfterEvict, "is negative")
	}
	return nil
}

// Pool is the shared proxy pool in Redis, as the fetchers of masters and
// slaves use it: Pick a proxy per request, Report how it went. It is safe
// for concurrent use.
type Pool struct {
	rdb  redis.UniversalClient
	keys cluster.ProxyKeys
	opts PoolOptions
}

// NewPool returns a Pool on rdb under keys.
func NewPool(rdb redis.UniversalClient, keys cluster.Keys, opts PoolOptions) (*Pool, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Pool{rdb: rdb, keys: keys.Proxies(), opts: opts}, nil
}

// Picked is a proxy chosen for one request. Report its outcome exactly
// once; an unreported pick's slot lapses after PoolOptions.SlotLease.
type Picked struct {
	// Proxy is the chosen proxy; Proxy.URL() is what the transport needs.
	Proxy Proxy
	// Host is the target host the pick was for.
	Host  string
	token string
}

// ID returns the proxy's ID, to exclude it from a retry's pick.
func (p Picked) ID() ID { return p.Proxy.ID() }

// URL returns the proxy's full URL, credentials included, for the
// transport.
func (p Picked) URL() *url.URL { return p.Proxy.URL() }

// Pick chooses a proxy for a request to target in one atomic script:
// weighted random by score among the PoolOptions.Best best proxies that
// are not in exclude (the ones a retry already went through), not cooling
// down after a timeout, not banned for target's host, at their own
// concurrency cap, nor, for an https target, unable to CONNECT. It returns
// ErrEmpty when the pool holds no usable proxy, ErrBusy when the proxies that
// could serve the request are at their caps, and ErrUnavailable when none
// of them is free for this request.
func (p *Pool) Pick(ctx context.Context, target *url.URL, exclude []ID) (Picked, error) {
	host := hostKey(target)
	token := newToken()[:16]
	keys := []string{p.keys.Usable(), p.keys.Cooldown(), p.keys.Ban(host), p.keys.URLs(),
		p.keys.Caps(), p.keys.Tunnel(), p.keys.Slots(), p.keys.Busy()}
	needTunnel := 0
	if target.Scheme == "https" {
		needTunnel = 1
	}
	args := make([]any, 0, 8+len(exclude))
	args = append(args, rand.Float64(), p.opts.Best, p.opts.MaxScan, needTunnel,
		p.opts.ProxyConcurrency, p.opts.SlotLease.Milliseconds(), token, len(exclude))
	for _, id := range exclude {
		args = append(args, string(id))
	}
	res, err := pickScript.Run(ctx, p.rdb, keys, args...).StringSlice()
	if err != nil {
		return Picked{}, fmt.Errorf("pick proxy: %w", codes.Translate(err))
	}
	px, err := Parse(res[1])
	if err != nil || px.ID() != ID(res[0]) {
		return Picked{}, fmt.Errorf("pick proxy: stored URL of %s does not parse to it", res[0])
	}
	return Picked{Proxy: px, Host: host, token: token}, nil
}

// Report feeds a real request's outcome back in one atomic script and
// releases the request's slot. See Kind for what each outcome does.
func (p *Pool) Report(ctx context.Context, picked Picked, o Outcome) error {
	id := string(picked.ID())
	ban := o.BanFor
	if ban <= 0 {
		ban = p.opts.Ban
	}
	keys := []string{p.keys.Record(id), p.keys.Usable(), p.keys.Cooldown(), p.keys.Ban(picked.Host),
		p.keys.Slots(), p.keys.Busy(), p.keys.Schedule(), p.keys.Tunnel()}
	err := reportScript.Run(ctx, p.rdb, keys, id, picked.token, string(o.Kind),
		o.Latency.Milliseconds(), ban.Milliseconds(), p.opts.Cooldown.Milliseconds(), scoreAlpha,
		scoreHalfLatency.Milliseconds(), p.opts.EvictAfterTimeouts,
		p.opts.RecheckAfterEvict.Milliseconds(), o.Reason).Err()
	if err != nil {
		return fmt.Errorf("report proxy outcome: %w", codes.Translate(err))
	}
	return nil
}

// hostKey is the host a ban applies to: the URL's host and port, lowercased.
func hostKey(u *url.URL) string { return strings.ToLower(u.Host) }
