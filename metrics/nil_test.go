package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestNilRegistry checks that metrics switched off (a nil *Registry) make
// every recorder a no-op that callers can use without testing for nil.
func TestNilRegistry(t *testing.T) {
	var r *Registry
	n := r.Node(RoleSlave, 1)
	if n != nil {
		t.Fatal("a nil Registry gave a Node")
	}
	n.Fetch().Observe("a.example", 200, 10, time.Millisecond, nil)
	n.Fetch().InFlight(1)
	n.Retried(2)
	n.Failed("http")
	n.Dedup().Admitted("news", 1, 2)
	n.Politeness().Waited("a.example", time.Second, "rate")
	n.Robots().Disallowed("a.example")
	n.Robots().Fetched(200, nil)
	r.Queues().Set("news", []int64{1}, []int64{1})
	r.Queues().Forget("news")
	r.Proxies().SetStates(map[string]int{"usable": 1})
	if r.Gatherer() != nil {
		t.Error("a nil Registry has a Gatherer")
	}
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil Registry's handler answered %d, want 404", rec.Code)
	}
	if _, err := Serve(context.Background(), "127.0.0.1:0", r); err == nil {
		t.Error("Serve accepted a nil Registry")
	}
}

// TestNilRegistry_redisHook checks that the nil node's hook passes
// commands, pipelines and dials through to a real Redis.
func TestNilRegistry_redisHook(t *testing.T) {
	_, keys := testenv.Redis(t)
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	defer rdb.Close()
	var r *Registry
	rdb.AddHook(r.Node(RoleMaster, 0).RedisHook())
	ctx := context.Background()
	key := keys.Prefix + ":nil"
	if err := rdb.Set(ctx, key, "v", time.Minute).Err(); err != nil {
		t.Fatalf("SET through a nil hook: %v", err)
	}
	cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, key)
		p.Incr(ctx, key+":n")
		return nil
	})
	if err != nil || cmds[0].(*redis.StringCmd).Val() != "v" || cmds[1].(*redis.IntCmd).Val() != 1 {
		t.Fatalf("pipeline through a nil hook: %v %v", cmds, err)
	}
}
