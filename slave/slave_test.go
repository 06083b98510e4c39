package slave

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/queue"
	"github.com/crawler-dev/crawler/store"
)

// TestSlave_ReleasesOrphans: a task sits in the slave's in-flight set
// without the slave knowing (a take whose reply was lost, or an earlier run
// of the slave). The slave hands it back and stores it long before its
// one-minute lease would have lapsed.
func TestSlave_ReleasesOrphans(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><body><h1>Orphan</h1></body></html>"))
	}))
	defer site.Close()

	spec := jobspec.Default()
	spec.Name, spec.Seeds, spec.AllowPrivateNetworks = "orphans", []string{site.URL + "/list"}, true
	spec.DetailLink = &jobspec.LinkRule{CSS: "a"}
	spec.Fields = map[string]jobspec.FieldRule{"title": {CSS: "h1"}}
	spec.ApplyDefaults()
	jk := keys.Job("orphans")
	raw, _ := json.Marshal(&spec)
	rdb.Set(ctx, jk.Spec(), raw, 0)
	rdb.HSet(ctx, jk.State(), cluster.StateField, cluster.StateRunning, cluster.StateSubmittedAt, "t0")
	rdb.ZAdd(ctx, keys.Jobs(), redis.Z{Score: 1, Member: "orphans"})

	url := site.URL + "/detail/1"
	fp := canon.RequestFingerprint("GET", url, nil)
	task := cluster.Task{URL: url, FP: fp.String(), Job: "orphans"}.Encode()
	q := queue.New(rdb, jk).Slave(0)
	rdb.RPush(ctx, jk.Queue(0), task)
	if got, err := q.Take(ctx, 1, time.Minute); err != nil || len(got) != 1 {
		t.Fatalf("orphan the task: %v %v", got, err)
	}

	items, err := store.OpenJSONL(filepath.Join(t.TempDir(), "items.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer items.Close()
	opts := DefaultOptions()
	opts.Concurrency = 2
	s, err := New(opts, Deps{Redis: rdb, Keys: keys, Store: items})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()

	testenv.Eventually(t, 20*time.Second, "the orphaned task handed back and stored (its lease would take 60s)", func() bool {
		n, _ := items.Counts()
		return n == 1
	})
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if stored := rdb.HGet(ctx, jk.Stats(), cluster.StatStored).Val(); stored != "1" {
		t.Errorf("stored counter %q, want 1", stored)
	}
	if n := rdb.ZCard(ctx, jk.Inflight(0)).Val(); n != 0 {
		t.Errorf("%d tasks left in flight", n)
	}
}
