package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// SlaveLoad is what one slave holds now, as it publishes it.
type SlaveLoad struct {
	// Capacity is how many tasks the slave holds for its fetchers: being
	// fetched or due soon (4 × its concurrency).
	Capacity int `json:"capacity"`
	// MaxParked is how many long-waiting tasks it holds beyond Capacity.
	MaxParked int `json:"max_parked"`
	// Concurrency is how many pages it fetches at once.
	Concurrency int `json:"concurrency"`
	// Held is every task it holds (leased and not yet acknowledged):
	// being fetched, waiting for their host's budget, its robots.txt or a
	// proxy.
	Held int `json:"held"`
	// Parked is the part of Held that will not start soon (a paused or
	// slow host's); Fetching the part being fetched now.
	Parked   int `json:"parked"`
	Fetching int `json:"fetching"`
	// Hosts are the hosts it holds most tasks for, most first.
	Hosts []HostLoad `json:"hosts,omitempty"`
	// At is when it was published.
	At time.Time `json:"at"`
}

// Waiting is the part of Held neither fetched nor parked: waiting for its
// turn at the host.
func (l SlaveLoad) Waiting() int { return max(0, l.Held-l.Parked-l.Fetching) }

// HostLoad is how many tasks of one host a slave holds, and an origin of
// the host (scheme://host[:port]) whose robots.txt applies to them.
type HostLoad struct {
	Host   string `json:"host"`
	Origin string `json:"origin"`
	Held   int    `json:"held"`
}

// MaxHosts is how many hosts a slave publishes.
const MaxHosts = 10

func prefix(k cluster.Keys) string {
	if k.Prefix == "" {
		return cluster.DefaultPrefix
	}
	return k.Prefix
}

// loadKey is slave id's published load.
func loadKey(k cluster.Keys, id int) string {
	return prefix(k) + ":feed:slave:" + strconv.Itoa(id) + ":load"
}

// Feed publishes to the status page.
type Feed struct {
	rdb  redis.UniversalClient
	keys cluster.Keys
}

// New returns a Feed writing under keys in rdb; nil rdb gives a Feed that
// publishes nothing.
func New(rdb redis.UniversalClient, keys cluster.Keys) *Feed {
	return &Feed{rdb: rdb, keys: keys}
}

// PublishLoad writes slave id's load, kept for ttl (a few of its
// heartbeats, so a dead slave's load goes with its lease).
func (f *Feed) PublishLoad(ctx context.Context, id int, l SlaveLoad, ttl time.Duration) error {
	if f == nil || f.rdb == nil {
		return nil
	}
	if len(l.Hosts) > MaxHosts {
		l.Hosts = l.Hosts[:MaxHosts]
	}
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("publish load: %w", err)
	}
	if err := f.rdb.Set(ctx, loadKey(f.keys, id), b, ttl).Err(); err != nil {
		return fmt.Errorf("publish load of slave %d: %w", id, err)
	}
	return nil
}

// ReadLoads reads the published loads of the slaves ids, in one round
// trip; a slave that published none is missing from the map.
func ReadLoads(ctx context.Context, rdb redis.UniversalClient, keys cluster.Keys, ids []int) (map[int]SlaveLoad, error) {
	out := map[int]SlaveLoad{}
	if len(ids) == 0 {
		return out, nil
	}
	pipe := rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.Get(ctx, loadKey(keys, id))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read slave loads: %w", err)
	}
	for i, c := range cmds {
		b, err := c.Bytes()
		if err != nil {
			continue
		}
		var l SlaveLoad
		if json.Unmarshal(b, &l) == nil {
			out[ids[i]] = l
		}
	}
	return out, nil
}
