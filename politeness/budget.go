package politeness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// ErrNoHost is returned for a Want or call without a host.
var ErrNoHost = errors.New("no host")

// Budget is the cluster's per-host politeness budget: a rate, a
// concurrency cap, pauses and backoff, kept in Redis so that every process
// sending requests to a host draws on the same budget. It never blocks:
// Acquire answers at once with leases or with how long to wait. It is safe
// for concurrent use.
type Budget struct {
	rdb  redis.UniversalClient
	opts Options
}

// New returns a Budget on rdb.
func New(rdb redis.UniversalClient, opts Options) (*Budget, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if rdb == nil {
		return nil, errors.New("politeness: New needs a Redis client")
	}
	return &Budget{rdb: rdb, opts: opts}, nil
}

// Reason says what held back a Grant.
type Reason string

// Reasons a Grant holds fewer leases than wanted.
const (
	ReasonNone   Reason = ""       // everything wanted was granted
	ReasonPaused Reason = "paused" // the host asked for a pause (Retry-After)
	ReasonRate   Reason = "rate"   // the host's rate is used up for now
	ReasonFull   Reason = "full"   // the host's concurrency cap is reached
)

// Want asks for N requests to Host under Rule.
type Want struct {
	// Host is the target site's host (see HostOf), never a proxy's.
	Host string
	// Rule is the host's rate and cap.
	Rule Rule
	// N is how many requests the caller has ready for the host; 0 means 1.
	// At most Options.MaxWant are granted at once.
	N int
}

// Grant is the answer to one Want: a Lease for each request that may go
// now, and if fewer than wanted, how long to wait before asking again.
type Grant struct {
	// Host is the Want's host.
	Host string
	// Leases are the requests granted, one each; Release or Done each one.
	Leases []*Lease
	// Wait is when asking again may grant more; 0 when all were granted.
	Wait time.Duration
	// Reason is what held back the rest.
	Reason Reason
	// At is the Redis server's clock when the grant was made.
	At time.Time
}

// Acquire asks for one request to host. It does not wait: the Grant holds
// one lease, or none and a Wait.
func (b *Budget) Acquire(ctx context.Context, host string, r Rule) (Grant, error) {
	gs, err := b.AcquireMany(ctx, []Want{{Host: host, Rule: r, N: 1}})
	if err != nil {
		return Grant{}, err
	}
	return gs[0], nil
}

// AcquireMany asks for requests to several hosts in one round trip to
// Redis (one per shard on a Redis Cluster): a process with tasks for many
// hosts asks once per host per tick, not once per task. Each host's
// answer is atomic: the pause, the cap and the rate are checked and used
// together. Grants are in the order of wants.
func (b *Budget) AcquireMany(ctx context.Context, wants []Want) ([]Grant, error) {
	keys := make([][]string, len(wants))
	args := make([][]any, len(wants))
	prefixes := make([]string, len(wants))
	for i, w := range wants {
		if err := b.check(w); err != nil {
			return nil, err
		}
		host := normalize(w.Host)
		l := w.Rule.limits(b.opts.DefaultRPS)
		prefixes[i] = newToken()
		keys[i] = b.hostKeys(host)
		args[i] = []any{min(max(w.N, 1), b.opts.MaxWant), l.intervalMS, l.burst, l.cap,
			b.opts.LeaseTTL.Milliseconds(), b.opts.StateTTL.Milliseconds(), b.opts.FullWait.Milliseconds(),
			prefixes[i], cluster.RateTAT, cluster.RateFactor}
	}
	cmds, err := evalMany(ctx, b.rdb, acquireScript, keys, args)
	grants := make([]Grant, len(wants))
	for i, c := range cmds {
		if c.Err() == nil {
			grants[i] = b.grant(normalize(wants[i].Host), prefixes[i], c.Val())
		}
	}
	if err != nil {
		b.releaseAll(ctx, grants) // some hosts may have granted before the failure
		return nil, fmt.Errorf("acquire: %w", err)
	}
	return grants, nil
}

func (b *Budget) check(w Want) error {
	if strings.TrimSpace(w.Host) == "" {
		return fmt.Errorf("acquire: %w", ErrNoHost)
	}
	if err := w.Rule.Validate(); err != nil {
		return fmt.Errorf("acquire %s: %w", w.Host, err)
	}
	if w.N < 0 {
		return fmt.Errorf("acquire %s: %w", w.Host, cluster.Invalid("N", w.N, "is negative"))
	}
	return nil
}

// grant reads acquire.lua's reply {granted, wait_ms, now_ms, reason}.
func (b *Budget) grant(host, prefix string, val any) Grant {
	res, _ := val.([]any)
	if len(res) < 4 {
		return Grant{Host: host}
	}
	n, now := toInt64(res[0]), toInt64(res[2])
	reason, _ := res[3].(string)
	g := Grant{Host: host, Wait: time.Duration(toInt64(res[1])) * time.Millisecond,
		Reason: Reason(reason), At: time.UnixMilli(now)}
	granted := time.Now()
	for i := int64(1); i <= n; i++ {
		g.Leases = append(g.Leases, &Lease{budget: b, host: host, token: fmt.Sprintf("%s%d", prefix, i), granted: granted})
	}
	return g
}

// releaseAll gives back the leases of grants, best effort: a lease not
// given back frees after Options.LeaseTTL anyway.
func (b *Budget) releaseAll(ctx context.Context, grants []Grant) {
	for _, g := range grants {
		for _, l := range g.Leases {
			_ = l.Release(ctx)
		}
	}
}

func (b *Budget) hostKeys(host string) []string {
	k := b.opts.Keys.Host(host)
	return []string{k.Rate(), k.Leases(), k.Pause()}
}

// HostOf returns the host a URL's budget is kept under: its host name in
// lower case, without the port, so every port of a site shares one budget.
func HostOf(u *url.URL) string { return normalize(u.Hostname()) }

func normalize(host string) string { return strings.ToLower(strings.TrimSpace(host)) }

func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:]) + ":"
}
