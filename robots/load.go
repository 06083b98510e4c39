package robots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crawler-dev/crawler/internal/ctxtime"
	"go.uber.org/zap"
)

// pollInterval is how often a process waiting for another's fetch looks in
// Redis again.
const pollInterval = 50 * time.Millisecond

// entry returns origin's entry from this process's cache, or loads it; the
// goroutines of one process that miss together load it once.
func (c *Cache) entry(ctx context.Context, origin string) (*entry, error) {
	if e, ok := c.files.Get(origin); ok && c.now().Before(e.expires) {
		return e, nil
	}
	for {
		v, err, _ := c.flight.Do(origin, func() (any, error) { return c.load(ctx, origin) })
		if err != nil && ctx.Err() == nil && isContextErr(err) {
			continue // the goroutine that loaded it was cancelled, this one was not
		}
		if err != nil {
			return nil, err
		}
		return v.(*entry), nil
	}
}

// load reads origin's file from Redis, or fetches it for the cluster if no
// process is fetching it, or waits up to Options.Wait for the one that is.
func (c *Cache) load(ctx context.Context, origin string) (*entry, error) {
	deadline := c.now().Add(c.opts.Wait)
	for {
		token := newToken()
		res, err := c.store.claim(ctx, origin, token, c.opts.FetchTimeout)
		switch {
		case err != nil:
			return nil, err
		case res.file != nil:
			return c.keep(origin, res.file), nil
		case res.fetch:
			return c.fetch(ctx, origin, token)
		}
		left := deadline.Sub(c.now())
		if left <= 0 {
			// Not cached: the next Check looks in Redis again.
			return &entry{blocked: true, elsewhere: true, expires: c.now().Add(res.wait)}, nil
		}
		if err := ctxtime.Sleep(ctx, min(res.wait, left, pollInterval)); err != nil {
			return nil, err
		}
	}
}

// fetch downloads origin's robots.txt under the lease token, stores it for
// the cluster and keeps it here.
func (c *Cache) fetch(ctx context.Context, origin, token string) (*entry, error) {
	fctx, cancel := context.WithTimeout(ctx, c.opts.FetchTimeout)
	status, body, err := c.download(fctx, origin)
	cancel()
	if err != nil && (ctx.Err() != nil || errors.Is(err, ErrRefused)) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = c.store.release(rctx, origin, token) // else it expires after FetchTimeout
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("robots.txt of %s: %w", origin, err)
	}
	if err != nil {
		c.log.Debug("robots.txt unreachable", zap.String("origin", origin), zap.Error(err))
	}
	if blocked(status) || status > 299 {
		body = nil
	}
	ttl := c.opts.TTL
	if blocked(status) {
		ttl = c.opts.ErrorTTL
	}
	at, err := c.store.put(ctx, origin, token, status, body, ttl)
	if err != nil {
		return nil, err
	}
	c.log.Debug("robots.txt fetched", zap.String("origin", origin), zap.Int("status", status),
		zap.Int("bytes", len(body)))
	return c.keep(origin, &shared{status: status, body: body, fetchedAt: at, ttl: ttl}), nil
}

// keep parses a shared file and caches it here until Redis's copy expires.
func (c *Cache) keep(origin string, s *shared) *entry {
	ttl := s.ttl
	if ttl <= 0 { // no expiry in Redis: cannot happen, but never keep it for ever
		ttl = c.opts.ErrorTTL
	}
	e := &entry{status: s.status, fetchedAt: s.fetchedAt, expires: c.now().Add(ttl)}
	switch {
	case blocked(s.status):
		e.blocked = true
	case s.status >= 200 && s.status <= 299:
		e.file = Parse(s.body)
	}
	c.files.Add(origin, e)
	return e
}

// blocked reports the statuses that mean "disallow everything for a while"
// (RFC 9309 §2.3.1.3-4): no response (0), 5xx, and 429, which asks the
// crawler to slow down (Google reads it so too). Other 4xx, and 3xx past
// the redirects followed, mean "no robots.txt": everything is allowed.
func blocked(status int) bool {
	return status < 200 || status == 429 || status >= 500
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
