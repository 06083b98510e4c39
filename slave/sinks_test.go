package slave

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/sink"
	"github.com/crawler-dev/crawler/store"
)

// downSink is a sink beside the real ones (sink package, cmd/crawler):
// until up is closed it takes nothing, as a fan-out holding a batch for a
// sink that is down does; then it takes everything, once per page.
type downSink struct {
	up   chan struct{}
	mu   sync.Mutex
	took map[string]int
}

func (d *downSink) Put(ctx context.Context, recs []sink.Record) []error {
	select {
	case <-d.up:
	case <-ctx.Done():
		errs := make([]error, len(recs))
		for i := range errs {
			errs[i] = ctx.Err()
		}
		return errs
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range recs {
		d.took[r.Item.URL]++
	}
	return make([]error, len(recs))
}

func (d *downSink) PutFailure(context.Context, store.Failure) error { return nil }
func (d *downSink) KeepsExchanges() bool                            { return false }

// TestSlave_sinkDown: a sink that is down holds the slave's
// acknowledgements, and the slave takes no more tasks than it can hold (its
// fetchers' share and a batch waiting for the sink) instead of fetching on;
// once the sink is up every page is acknowledged, none dead-lettered.
func TestSlave_sinkDown(t *testing.T) {
	ctx := context.Background()
	rdb, keys := testenv.Redis(t)
	site := page(t)
	const pages = 600
	paths := make([]string, pages)
	for i := range paths {
		paths[i] = fmt.Sprintf("/p/%d", i)
	}
	jk := runningJobSpec(t, ctx, rdb, keys, "sinkdown", site.URL, func(spec *jobspec.Job) { spec.PerHostRPS = 1000 }, paths...)
	sk := &downSink{up: make(chan struct{}), took: map[string]int{}}
	opts := DefaultOptions()
	opts.Concurrency, opts.Poll, opts.MaxParked = 4, 10*time.Millisecond, 0
	items, path := jsonlStoreAt(t)
	s, err := New(opts, Deps{Redis: rdb, Keys: keys, Store: items, Sinks: sk})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })

	testenv.Eventually(t, time.Minute, "the slave to stop taking tasks, its pages fetched and held", func() bool {
		return s.dl.Pending() == 0 && s.commits.held() >= commitBatch && s.room() < s.refill()
	})
	// The fetchers' share, a take's worth more, a batch in the committer.
	bound := int64(2*s.capacity() + commitBatch)
	if held := rdb.ZCard(ctx, jk.Inflight(0)).Val(); held > bound {
		t.Fatalf("%d tasks taken with the sink down, want at most %d", held, bound)
	}
	close(sk.up)
	settled(t, ctx, rdb, jk)
	sk.mu.Lock()
	defer sk.mu.Unlock()
	if len(sk.took) != pages {
		t.Fatalf("the sink took %d pages, want %d", len(sk.took), pages)
	}
	if failed := failureRecords(t, items, path); len(failed) != 0 {
		t.Fatalf("%d pages recorded failed (dead-lettered?), want none", len(failed))
	}
}
