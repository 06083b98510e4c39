package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// RedisAddr is the address of the test Redis.
func RedisAddr() string {
	if a := os.Getenv("CRAWLER_TEST_REDIS"); a != "" {
		return strings.TrimPrefix(a, "redis://")
	}
	return "127.0.0.1:6379"
}

// RedisURL is the test Redis as a redis:// URL, as the crawler's flags take it.
func RedisURL() string { return "redis://" + RedisAddr() + "/0" }

// Redis connects to the test Redis and returns a client with Keys under a
// prefix no other test uses. Every key containing that prefix is deleted when
// the test ends. It fails the test if Redis does not answer.
func Redis(t testing.TB) (*redis.Client, cluster.Keys) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: RedisAddr()})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("testenv: no Redis at %s (set CRAWLER_TEST_REDIS, or run make test): %v", RedisAddr(), err)
	}
	prefix := UniquePrefix(t)
	t.Cleanup(func() {
		DeleteKeys(t, rdb, prefix)
		rdb.Close()
	})
	return rdb, cluster.Keys{Prefix: prefix}
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// UniquePrefix returns a key prefix or name unique to this test run:
// "t-<test name>-<random>".
func UniquePrefix(t testing.TB) string {
	name := strings.ToLower(unsafeChars.ReplaceAllString(t.Name(), "-"))
	if len(name) > 40 {
		name = name[:40]
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "t-" + strings.Trim(name, "-") + "-" + hex.EncodeToString(b[:])
}

// DeleteKeys removes every key whose name contains prefix.
func DeleteKeys(t testing.TB, rdb redis.UniversalClient, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := rdb.Scan(ctx, 0, "*"+prefix+"*", 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			rdb.Unlink(ctx, batch...)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		rdb.Unlink(ctx, batch...)
	}
	if err := iter.Err(); err != nil {
		t.Logf("testenv: cleaning keys %s*: %v", prefix, err)
	}
}

// ServerTime is the Redis server's clock, which leases and expiry follow.
func ServerTime(t testing.TB, rdb redis.UniversalClient) time.Time {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// WaitServerTime sleeps until the Redis server's clock reaches at, for
// tests in which expiry itself is under test.
func WaitServerTime(t testing.TB, rdb redis.UniversalClient, at time.Time) {
	t.Helper()
	for now := ServerTime(t, rdb); now.Before(at); now = ServerTime(t, rdb) {
		time.Sleep(min(at.Sub(now)+time.Millisecond, 50*time.Millisecond))
	}
}
