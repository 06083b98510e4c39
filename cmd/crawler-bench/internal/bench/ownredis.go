package bench

import (
	"context"
	"fmt"

	"github.com/crawler-dev/crawler/internal/redisserver"
)

// StartRedis starts the redis-server executable path (found on $PATH when
// it has no slash) on a free loopback port, keeping nothing on disk, and
// waits until it answers: a Redis of the benchmark's own, so that Redis's
// INFO (CPU time, commandstats, memory) counts the benchmark's traffic
// alone. On a Redis that others use, their commands and CPU land in the
// numbers.
func StartRedis(ctx context.Context, path string) (*redisserver.Server, error) {
	s, err := redisserver.Start(ctx, redisserver.Options{Path: path})
	if err != nil {
		return nil, fmt.Errorf("redis server: %w", err)
	}
	return s, nil
}

// UseRedis returns the URL of the Redis a benchmark runs on: a server of
// its own started from the executable server when that is set, else url.
// The function returned stops the server of its own, if any.
func UseRedis(ctx context.Context, server, url string) (string, func() error, error) {
	if server == "" {
		return url, func() error { return nil }, nil
	}
	s, err := StartRedis(ctx, server)
	if err != nil {
		return "", nil, err
	}
	return s.URL(), s.Close, nil
}
