package politeness

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoHost is returned for a request without a host.
var ErrNoHost = errors.New("no host")

// Budget is the cluster's per-host politeness budget: a rate, a
// concurrency cap, pauses and backoff, kept in Redis so that every process
// sending requests to a host draws on the same budget. Processes draw on
// it through Gates. It is safe for concurrent use.
type Budget struct {
	rdb    redis.UniversalClient
	opts   Options
	shards int
}

// New returns a Budget on rdb.
func New(rdb redis.UniversalClient, opts Options) (*Budget, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if rdb == nil {
		return nil, errors.New("politeness: New needs a Redis client")
	}
	shards := opts.Shards
	if shards == 0 {
		shards = 1
		if _, ok := rdb.(*redis.ClusterClient); ok {
			shards = ClusterShards
		}
	}
	return &Budget{rdb: rdb, opts: opts, shards: shards}, nil
}

// Reason says what held a request back at its host's gate.
type Reason string

// Reasons a request waits at its host's gate.
const (
	ReasonNone   Reason = ""       // it went at once
	ReasonPaused Reason = "paused" // the host asked for a pause (Retry-After)
	ReasonRate   Reason = "rate"   // the host's rate is used up for now
	ReasonFull   Reason = "full"   // the host's concurrency cap is in use
)

// HostState is a host's budget as Redis holds it now.
type HostState struct {
	// Held is the slots of the host's cap that processes hold; each
	// process holds slots for many requests in a row.
	Held int
	// Holders is the number of processes holding slots or waiting for
	// some.
	Holders int
	// Factor is the share of the rule's rate in use after backoff, (0, 1].
	Factor float64
	// Paused is how long the host stays paused, or 0.
	Paused time.Duration
}

// State reads host's budget, for status pages and tests.
func (b *Budget) State(ctx context.Context, host string) (HostState, error) {
	host = normalize(host)
	k := b.opts.Keys.Politeness(ShardOf(host, b.shards))
	res, err := stateScript.Run(ctx, b.rdb, []string{k.Hosts(), k.Live()}, host).Slice()
	if err != nil {
		return HostState{}, fmt.Errorf("state of %s: %w", host, err)
	}
	return HostState{Held: int(toInt64(res[0])), Holders: int(toInt64(res[1])), Factor: toFloat(res[2]),
		Paused: time.Duration(toInt64(res[3])) * time.Millisecond}, nil
}

// ShardOf is the shard of n that keeps host's budget (FNV-1a of the
// name): every process of a cluster finds a host in the same shard.
func ShardOf(host string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(host))
	return int(h.Sum32() % uint32(n))
}

// HostOf returns the host a URL's budget is kept under: its host name in
// lower case, without the port, so every port of a site shares one budget.
func HostOf(u *url.URL) string { return normalize(u.Hostname()) }

func normalize(host string) string { return strings.ToLower(strings.TrimSpace(host)) }
