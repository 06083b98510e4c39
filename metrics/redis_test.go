package metrics

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestRedisHook counts commands, a pipeline, a script and failures sent to
// the real Redis, and checks them in a scrape over HTTP.
func TestRedisHook(t *testing.T) {
	_, keys := testenv.Redis(t)
	r := newRegistry(t, DefaultOptions())
	base := serve(t, r)
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	defer rdb.Close()
	rdb.AddHook(r.Node(RoleSlave, 2).RedisHook())
	ctx := context.Background()
	key := keys.Prefix + ":hook"

	must(t, rdb.Set(ctx, key, "v", time.Minute).Err())
	must(t, rdb.Get(ctx, key).Err())
	if err := rdb.Get(ctx, key+":missing").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET missing: %v", err)
	}
	if err := rdb.Incr(ctx, key).Err(); err == nil {
		t.Fatal("INCR of a non-integer succeeded")
	}
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for range 3 {
			p.Incr(ctx, key+":n")
		}
		p.Get(ctx, key)
		p.Incr(ctx, key) // fails: not an integer
		return nil
	})
	if err == nil {
		t.Fatal("a pipeline with a failing INCR succeeded")
	}
	// A script nobody has loaded: the first Run's EVALSHA fails NOSCRIPT
	// and go-redis falls back to EVAL; the second is one EVALSHA.
	script := redis.NewScript("-- " + randomHex(t) + "\nreturn redis.call('INCR', KEYS[1])")
	for range 2 {
		must(t, script.Run(ctx, rdb, []string{key + ":s"}).Err())
	}

	m := scrape(t, base)
	at := func(more ...string) []string { return append([]string{"role=slave", "slave=2"}, more...) }
	for cmd, want := range map[string]float64{"set": 1, "get": 3, "incr": 5, "evalsha": 2, "eval": 1} {
		m.expect(t, want, "crawler_redis_commands_total", at("command="+cmd)...)
	}
	for cmd, want := range map[string]float64{"get": 0, "incr": 2, "evalsha": 1, "eval": 0} {
		m.expect(t, want, "crawler_redis_errors_total", at("command="+cmd)...)
	}
	for cmd, want := range map[string]float64{"set": 1, "get": 2, "incr": 1, "evalsha": 2, "eval": 1} {
		m.expect(t, want, "crawler_redis_roundtrip_seconds", at("command="+cmd)...)
	}
	// Ours, and one per new connection for its CLIENT SETINFO.
	if n := m.value(t, "crawler_redis_roundtrip_seconds", at("command=pipeline")...); n < 1 {
		t.Errorf("%v pipeline round trips, want at least 1", n)
	}
	if dials := m.value(t, "crawler_redis_dials_total", at("result=ok")...); dials < 1 {
		t.Errorf("%v dials counted, want at least 1", dials)
	}
	for _, mf := range m {
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == labelCommand && len(l.GetValue()) > 10 {
					t.Errorf("command label %q: not a command name", l.GetValue())
				}
			}
		}
	}
}

// TestRedisHook_dialError counts a connection that could not be opened.
func TestRedisHook_dialError(t *testing.T) {
	r := newRegistry(t, DefaultOptions())
	ln := closedPort(t)
	rdb := redis.NewClient(&redis.Options{Addr: ln, MaxRetries: -1, DialTimeout: time.Second})
	defer rdb.Close()
	rdb.AddHook(r.Node(RoleProxy, 0).RedisHook())
	if err := rdb.Ping(context.Background()).Err(); err == nil {
		t.Fatalf("PING to closed port %s succeeded", ln)
	}
	m := gather(t, r)
	if n := m.value(t, "crawler_redis_dials_total", "role=proxy", "slave=", "result=error"); n < 1 {
		t.Errorf("%v failed dials counted, want at least 1", n)
	}
	m.expect(t, 1, "crawler_redis_errors_total", "role=proxy", "slave=", "command=ping")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func randomHex(t *testing.T) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}
