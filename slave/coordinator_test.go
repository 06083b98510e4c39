package slave

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
)

// TestSlave_deadLetter (issue 8, defect 6): a task whose item write always
// fails is not redelivered for ever: after MaxDeliveries it is recorded as
// failed with the write's error and counted, so the job can finish.
func TestSlave_deadLetter(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	site := page(t)
	jk := runningJob(t, ctx, rdb, keys, "poison", site.URL, "/detail/1")
	real, path := jsonlStoreAt(t)
	broken := &brokenItems{ItemStore: real}
	opts := DefaultOptions()
	opts.Concurrency, opts.TaskLease, opts.MaxDeliveries = 2, 3*time.Second, 2
	runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: broken})
	testenv.Eventually(t, 45*time.Second, "the poison task is dead-lettered", func() bool {
		return rdb.HGet(ctx, jk.Stats(), cluster.StatDeadLetters).Val() == "1"
	})
	stats := rdb.HGetAll(ctx, jk.Stats()).Val()
	if stats[cluster.StatFailed] != "1" || stats[cluster.StatStored] != "" {
		t.Errorf("stats = %v, want failed 1, nothing stored", stats)
	}
	if n := broken.attempts.Load(); n != 2 {
		t.Errorf("the item write was tried %d times, want MaxDeliveries = 2", n)
	}
	if _, failures := real.Counts(); failures != 1 {
		t.Fatalf("%d failure records, want 1", failures)
	}
	if err := real.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(store.FailuresPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), errTooLarge.Error()) {
		t.Errorf("failure record %s does not give the write's error", data)
	}
	if !strings.Contains(string(data), `"attempts":2`) {
		t.Errorf("failure record %s does not count its 2 begun deliveries as attempts", data)
	}
	if n := rdb.ZCard(ctx, jk.Inflight(0)).Val() + rdb.LLen(ctx, jk.Queue(0)).Val(); n != 0 {
		t.Errorf("%d tasks left on the slave's queue", n)
	}
}

// TestSlave_brokenJobSpec (issue 8, defect 13): a job whose spec cannot be
// loaded does not keep the slave from working on the others.
func TestSlave_brokenJobSpec(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	site := page(t)
	broken := runningJob(t, ctx, rdb, keys, "aaa-broken", site.URL)
	rdb.Set(ctx, broken.Spec(), "{not json", 0)
	good := runningJob(t, ctx, rdb, keys, "zzz-good", site.URL, "/detail/1", "/detail/2")
	items := jsonlStore(t)
	opts := DefaultOptions()
	opts.Concurrency = 2
	runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: items})
	testenv.Eventually(t, 20*time.Second, "the good job's pages are stored", func() bool {
		return rdb.HGet(ctx, good.Stats(), cluster.StatStored).Val() == "2"
	})
}

// TestSlave_ackRetry: acknowledgements that fail (Redis away) are kept and
// sent again; each outcome is counted exactly once.
func TestSlave_ackRetry(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	site := page(t)
	jk := runningJob(t, ctx, rdb, keys, "acks", site.URL, "/a", "/b", "/c")
	hook := &failingScripts{match: func(cmd redis.Cmder) bool {
		return (cmd.Name() == "evalsha" || cmd.Name() == "eval") && containsArg(cmd.Args(), jk.Stats())
	}}
	hook.n.Store(3)
	rdb.AddHook(hook)
	opts := DefaultOptions()
	opts.Concurrency = 3
	runSlave(t, ctx, opts, Deps{Redis: rdb, Keys: keys, Store: jsonlStore(t)})
	testenv.Eventually(t, 30*time.Second, "three pages stored", func() bool {
		return rdb.HGet(ctx, jk.Stats(), cluster.StatStored).Val() == "3"
	})
	if hook.n.Load() >= 0 {
		t.Fatalf("no acknowledgement failed (%d injections left): the test proved nothing", hook.n.Load())
	}
	settled(t, ctx, rdb, jk) // every acknowledgement went through: one sent again now finds nothing in flight
	if got := rdb.HGet(ctx, jk.Stats(), cluster.StatStored).Val(); got != "3" {
		t.Errorf("stored = %s after the retries, want 3", got)
	}
}

func containsArg(args []any, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}
