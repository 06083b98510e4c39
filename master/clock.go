package master

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// serverClock is the cluster's clock, Redis's TIME, as a master reads it.
// Rounds are scheduled on it, as leases, rates and dupefilter windows
// are, so a master whose host clock is off starts a round neither early
// nor late, and a test that moves the server's clock moves the schedule.
type serverClock struct {
	rdb  redis.UniversalClient
	skew atomic.Int64 // the server's clock minus ours, ns, as of the last sync
}

// sync reads the server's clock, keeps how far ours is from it, and
// returns it.
func (c *serverClock) sync(ctx context.Context) (time.Time, error) {
	server, err := c.rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("read the redis clock: %w", err)
	}
	c.skew.Store(int64(time.Until(server)))
	return server, nil
}

// now is the server's clock as of the last sync, carried on by ours: no
// round trip, for the steps that run many times a second.
func (c *serverClock) now() time.Time {
	return time.Now().Add(time.Duration(c.skew.Load()))
}
