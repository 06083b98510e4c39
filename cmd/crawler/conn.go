package main

import (
	"context"
	"errors"
	"fmt"
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
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pingCtx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("--redis: no answer from %s: %v", store.Redact(raw), redactErr(err, raw))
	}
	return rdb, nil
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
