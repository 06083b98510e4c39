package main

import (
	"context"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

// processBench runs a benchmark on a Redis, most of them starting the
// crawler binary as processes (crawl, idle, memory): it checks the output
// format, hands prepare the crawler's path (prepare fills the options in
// and validates them; nil when no crawler is started), then runs run on
// the Redis to use: one of the benchmark's own when redisServer names a
// redis-server, else redisURL.
// Option errors name their flags (names).
func processBench(ctx context.Context, format string, names fieldFlags, redisServer, redisURL string,
	prepare func(exe string) error, run func(f bench.Format, url string) error) error {
	f := bench.Format(format)
	if err := f.Validate(); err != nil {
		return names.name(err)
	}
	if prepare != nil {
		exe, err := crawlerBinary()
		if err != nil {
			return err
		}
		if err := prepare(exe); err != nil {
			return names.name(err)
		}
	}
	url, stop, err := bench.UseRedis(ctx, redisServer, redisURL)
	if err != nil {
		return err
	}
	defer stop()
	return run(f, url)
}
