package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/connurl"
	"github.com/crawler-dev/crawler/internal/redact"
	"github.com/crawler-dev/crawler/store"
)

// Defaults of the connection flags.
const (
	defaultRedis = "redis://127.0.0.1:6379/0"
	defaultMongo = "mongodb://127.0.0.1:27017/crawler"
)

// openRedis connects to Redis and checks that it answers. The URL is one
// of the forms connurl.ParseRedis reads: a single server, a Redis Cluster
// (redis://h1:port,h2:port) or Sentinel (redis+sentinel://...). Every key
// one script touches shares a hash tag, so the cluster's processes work
// unchanged on Redis Cluster.
func openRedis(ctx context.Context, raw string) (redis.UniversalClient, error) {
	parsed, err := connurl.ParseRedis(raw)
	if err != nil {
		return nil, fmt.Errorf("--redis: %w", err)
	}
	rdb := parsed.NewClient()
	dials := &dialErrors{}
	rdb.AddHook(dials)
	if err := pingRedis(ctx, rdb); err != nil {
		rdb.Close()
		if derr := dials.last(); derr != nil && !errors.Is(err, derr) {
			err = derr // the ping timed out retrying the dial: the dial's error is the cause
		}
		return nil, fmt.Errorf("--redis: no answer from %s: %v", store.Redact(raw), redactErr(err, raw))
	}
	return rdb, nil
}

// pingRedis pings Redis for at most 5 seconds, with go-redis's own
// warnings about failed dials held back: the dial's error is the cause the
// caller reports, once, instead of a warning per retry before it.
func pingRedis(ctx context.Context, rdb redis.UniversalClient) error {
	redisPinging.Add(1)
	defer redisPinging.Add(-1)
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return rdb.Ping(pingCtx).Err()
}

// redisPinging counts the pings of openRedis under way; while there is
// one, redisLogger drops go-redis's messages.
var redisPinging atomic.Int32

// dialErrors is a go-redis hook that remembers the last error dialing a
// server: a ping that retries a refused dial until its deadline reports
// "context deadline exceeded", and the dial's error says why.
type dialErrors struct {
	mu  sync.Mutex
	err error
}

// DialHook records each failed dial.
func (d *dialErrors) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil && ctx.Err() == nil {
			d.mu.Lock()
			d.err = err
			d.mu.Unlock()
		}
		return conn, err
	}
}

// ProcessHook passes commands on unchanged.
func (d *dialErrors) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook passes pipelines on unchanged.
func (d *dialErrors) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// last is the last failed dial's error, or nil.
func (d *dialErrors) last() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// redactErr returns err's message with the URL's credentials hidden:
// drivers quote the URL they failed on, or a secret of it alone.
func redactErr(err error, raw string) string {
	return redact.Text(err.Error(), raw)
}

// openMongo connects to the MongoDB URI.
func openMongo(ctx context.Context, uri string) (*store.Mongo, error) {
	if err := connurl.CheckMongo(uri); err != nil {
		return nil, fmt.Errorf("--mongo: %w", err)
	}
	m, err := store.OpenMongo(ctx, uri)
	if errors.Is(err, store.ErrUnreachable) {
		return nil, fmt.Errorf("--mongo: %w", err) // its URI redacted already
	}
	if err != nil {
		return nil, fmt.Errorf("--mongo: %s", redactErr(err, uri))
	}
	return m, nil
}
