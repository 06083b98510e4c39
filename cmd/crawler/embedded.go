package main

import (
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/master"
)

// embeddedRedis starts the in-process Redis (miniredis) that crawler run
// and crawler demo fall back to, the one place the crawler chooses it:
// everything that differs on it is set here, in plain options of the
// packages that run on it.
func embeddedRedis() (runBackend, error) {
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		return runBackend{}, fmt.Errorf("start embedded redis: %w", err)
	}
	stopClock := expireKeys(mr)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), DisableIdentity: true})
	return runBackend{rdb: rdb, close: func() { rdb.Close(); stopClock(); mr.Close() }, tune: embeddedMaster,
		what: "in-process (install redis-server for a faster run)"}, nil
}

// embeddedMaster fits a master to miniredis, which copies a whole string
// on every write and lives in this process: dupefilter slices in small
// blocks made on first write (dedup.SmallBlockBits), and no copies of
// them in the master, since miniredis already holds them here.
func embeddedMaster(o *master.Options) {
	o.DedupMinBlockBits, o.DedupCreateOnWrite, o.DedupCache = dedup.SmallBlockBits, true, 0
}

// expireKeys makes the embedded Redis expire keys as time passes:
// miniredis counts a key's TTL down only when told (FastForward), and
// leases, bans and dupefilter slices rely on expiry.
func expireKeys(mr *miniredis.Miniredis) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				mr.FastForward(now.Sub(last))
				last = now
			}
		}
	}()
	return func() { close(done); <-finished }
}
