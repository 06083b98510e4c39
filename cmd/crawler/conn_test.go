package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/metrics"
)

// TestOpenRedis_noClientErrors: against the test Redis (7.0 here, which
// refuses CLIENT SETINFO), new connections count no "client" command and
// no error in the process's metrics.
func TestOpenRedis_noClientErrors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rdb, err := openRedis(ctx, testenv.RedisURL())
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	reg, err := metrics.New(metrics.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	instrument(rdb, reg, metrics.RoleSlave, 0)
	conns := make([]*redis.Conn, 3) // three new connections
	for i := range conns {
		conns[i] = rdb.(*redis.Client).Conn()
		if err := conns[i].Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	fams, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range fams {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			if label(m.GetLabel(), "command") == "client" && m.GetCounter().GetValue() > 0 {
				t.Errorf("%s{command=\"client\"} = %v", name, m.GetCounter().GetValue())
			} else if name == "crawler_redis_errors_total" && m.GetCounter().GetValue() > 0 {
				t.Errorf("%s{command=%q} = %v", name, label(m.GetLabel(), "command"), m.GetCounter().GetValue())
			}
		}
	}
}

// TestRedisRefused_cause: a command that cannot reach Redis says why
// (the dial's "connection refused", not the ping's deadline) as its only
// line, without go-redis's warnings before it.
func TestRedisRefused_cause(t *testing.T) {
	t.Parallel()
	binary(t)
	redisURL := "redis://127.0.0.1:" + freePort(t) + "/0" // nothing listens there
	for _, args := range [][]string{
		{"client", "jobs", "--redis", redisURL},
		{"master", "--redis", redisURL, "--output", filepath.Join(t.TempDir(), "failures.jsonl")},
	} {
		_, stderr, err := crawler(t, time.Minute, args...)
		if err == nil || !strings.Contains(stderr, "connection refused") || strings.Contains(stderr, "deadline") ||
			!strings.HasPrefix(stderr, "crawler: --redis: no answer from") {
			t.Errorf("crawler %s: %v, stderr:\n%s\nwant the dial's error alone", strings.Join(args, " "), err, stderr)
		}
	}
}
