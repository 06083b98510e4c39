package downloader

import (
	"context"
	"sync"
	"time"

	"github.com/crawler-dev/crawler/proxy"
)

// proxyCountTTL is how long the pool's size is believed: a job in auto
// mode goes direct for up to this long after the first proxy arrives, and
// one that requires proxies waits up to this long more.
const proxyCountTTL = 2 * time.Second

// proxyCount is how many usable proxies the pool holds, read at most once
// per proxyCountTTL: with an empty pool (most crawls) no request pays a
// pick script for nothing.
type proxyCount struct {
	mu   sync.Mutex
	n    int64
	read time.Time
}

// none reports whether the pool held no usable proxy when last read; a
// failed read counts as none.
func (c *proxyCount) none(ctx context.Context, pool *proxy.Pool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.read) >= proxyCountTTL {
		n, err := pool.Size(ctx)
		if err != nil {
			n = 0
		}
		c.n, c.read = n, time.Now()
	}
	return c.n == 0
}
