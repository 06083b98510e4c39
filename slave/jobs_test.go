package slave

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/queue"
)

// TestJobSet_forgetsStoppedJobs: a job that stops running is dropped with
// what it holds (its near-duplicate mirror grows with its pages), and one
// that runs again is loaded afresh.
func TestJobSet_forgetsStoppedJobs(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dl, err := downloader.New(downloader.DefaultOptions(), downloader.Deps{Redis: rdb, Keys: keys,
		Fetcher: fetch.New(fetch.DefaultOptions())})
	if err != nil {
		t.Fatal(err)
	}
	site := page(t)
	a := runningJob(t, ctx, rdb, keys, "a", site.URL)
	runningJob(t, ctx, rdb, keys, "b", site.URL)
	reg, err := metrics.New(metrics.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	near := reg.Node(metrics.RoleSlave, 0).NearDup()
	s := newJobSet(rdb, keys, 0, queue.DefaultAging, dl, near, zap.NewNop())
	if err := s.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	first := s.byName["a"]
	if len(s.byName) != 2 || first == nil {
		t.Fatalf("cached %v, want a and b", s.byName)
	}
	near.Set("a", 10, 1000) // as the committer does
	if n := len(metricFamily(t, reg, "crawler_neardup_mirror_bytes").GetMetric()); n != 1 {
		t.Fatalf("%d mirror series, want a's", n)
	}
	rdb.HSet(ctx, a.State(), cluster.StateField, cluster.StateFinished)
	if err := s.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, held := s.byName["a"]; held || len(s.running) != 1 {
		t.Fatalf("after a finished: cached %v, running %d", s.byName, len(s.running))
	}
	if len(metricFamily(t, reg, "crawler_neardup_mirror_bytes").GetMetric()) != 0 {
		t.Error("a's near-duplicate mirror is still reported after it finished")
	}
	rdb.HSet(ctx, a.State(), cluster.StateField, cluster.StateRunning)
	if err := s.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if again := s.byName["a"]; again == nil || again == first {
		t.Fatalf("a runs again: cached %p, was %p; want a fresh job", again, first)
	}
}
