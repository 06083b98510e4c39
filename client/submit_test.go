package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/jobspec"
)

func testJob(name string, seeds ...string) *jobspec.Job {
	spec := jobspec.Default()
	spec.Name, spec.Seeds = name, seeds
	spec.DetailLink = &jobspec.LinkRule{CSS: "a"}
	spec.Fields = map[string]jobspec.FieldRule{"title": {CSS: "h1"}}
	return &spec
}

// TestSubmit_refusesWhatRedisCannotHold (issue 8, defect 4): a dupefilter
// sized beyond the server's memory is refused at submit, saying how much it
// needs, and nothing of the job is written; a small one is accepted. The
// sizes come from what this Redis reports (maxmemory, or the host's memory
// without one), so the test holds on any host.
func TestSubmit_refusesWhatRedisCannotHold(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx := context.Background()
	limit := memoryLimit(t, rdb)
	big := testJob("huge", "https://example.com/")
	big.ApplyDefaults()
	big.Dedup = capacityBeyond(t, keys.Job("huge"), big.Dedup, limit)
	err := c.Submit(ctx, big)
	if !errors.Is(err, dedup.ErrNoRoom) || !strings.Contains(err.Error(), "needs up to") {
		t.Fatalf("Submit(dedup %+v, beyond Redis's %d bytes) = %v, want ErrNoRoom saying how much it needs",
			big.Dedup, limit, err)
	}
	if n := rdb.Exists(ctx, keys.Job("huge").Spec(), keys.Job("huge").State()).Val(); n != 0 {
		t.Errorf("a refused job left %d keys", n)
	}
	small := testJob("fine", "https://example.com/")
	small.Dedup.Capacity = 1000
	if err := c.Submit(ctx, small); err != nil {
		t.Errorf("Submit(capacity 1000) = %v", err)
	}
}

// memoryLimit is the most memory the Redis may use: its maxmemory, or the
// host's memory without one.
func memoryLimit(t *testing.T, rdb redis.UniversalClient) uint64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	mem, err := dedup.ParseRedisMemory(info)
	if err != nil {
		t.Fatal(err)
	}
	if mem.MaxMemory > 0 {
		return mem.MaxMemory
	}
	if mem.TotalSystem == 0 {
		t.Fatal("Redis reports neither maxmemory nor total_system_memory: no limit to exceed")
	}
	return mem.TotalSystem
}

// capacityBeyond returns d resized until its dupefilter estimate exceeds
// limit bytes, more than Redis can ever hold whatever it holds now: the
// capacity doubles from a million, and on a host too big for the default
// window's slices, the window gets the most slices and the lowest error
// rate a job may have.
func capacityBeyond(t *testing.T, jk cluster.JobKeys, d jobspec.DedupSpec, limit uint64) jobspec.DedupSpec {
	t.Helper()
	widest := d
	widest.Window, widest.Granularity = jobspec.Duration(1000*time.Hour), jobspec.Duration(time.Hour)
	widest.ErrorRate = 1e-9
	for _, shape := range []jobspec.DedupSpec{d, widest} {
		for shape.Capacity = 1_000_000; shape.Capacity <= jobspec.MaxDedupCapacity; shape.Capacity *= 2 {
			if dedup.EstimateBytes(dedup.JobOptions(shape, jk)) > limit {
				return shape
			}
		}
	}
	t.Fatalf("no dupefilter a job may have needs more than Redis's %d bytes", limit)
	return d
}

// TestSubmit_manySeeds (issue 8, defect 4): a job of many seeds is stored a
// chunk per command, apart from its spec: Redis keeps answering others all
// along, and the spec every process loads stays small.
func TestSubmit_manySeeds(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx := context.Background()
	const n = 200_000
	seeds := make([]string, n)
	for i := range seeds {
		seeds[i] = fmt.Sprintf("https://example.com/list/%d?page=%d", i%977, i)
	}
	var busy atomic.Int64
	var worst atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // another client of the same Redis
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			if err := rdb.Ping(ctx).Err(); err != nil && strings.Contains(err.Error(), "BUSY") {
				busy.Add(1)
			}
			if d := time.Since(start).Microseconds(); d > worst.Load() {
				worst.Store(d)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	err := c.Submit(ctx, testJob("many", seeds...))
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if busy.Load() > 0 {
		t.Errorf("Redis answered BUSY %d times while the seeds were stored", busy.Load())
	}
	t.Logf("slowest PING from another client during submit: %d µs", worst.Load())
	jk := keys.Job("many")
	if got := rdb.LLen(ctx, jk.Seeds()).Val(); got != n {
		t.Errorf("seeds list holds %d, want %d", got, n)
	}
	if size := rdb.StrLen(ctx, jk.Spec()).Val(); size > 4096 {
		t.Errorf("the stored spec is %d bytes; the seeds must live apart from it", size)
	}
	raw, _ := rdb.Get(ctx, jk.Spec()).Bytes()
	spec, err := jobspec.Decode(raw)
	if err != nil || spec.SeedCount != n || len(spec.Seeds) != 0 {
		t.Errorf("stored spec: %d seeds inline, SeedCount %d, %v; want none inline and %d counted", len(spec.Seeds), spec.SeedCount, err, n)
	}
	if left := rdb.Keys(ctx, jk.Tag()+":seeds:staging:*").Val(); len(left) != 0 {
		t.Errorf("staging lists left behind: %q", left)
	}
}

// TestSubmit_activeJob: a job of the same name that is pending or running
// is not replaced, and the staged seeds are dropped; a finished one is.
func TestSubmit_activeJob(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx := context.Background()
	if err := c.Submit(ctx, testJob("once", "https://example.com/a")); err != nil {
		t.Fatal(err)
	}
	err := c.Submit(ctx, testJob("once", "https://example.com/b"))
	if !errors.Is(err, ErrJobActive) {
		t.Fatalf("second Submit = %v, want ErrJobActive", err)
	}
	jk := keys.Job("once")
	if got := rdb.LRange(ctx, jk.Seeds(), 0, -1).Val(); len(got) != 1 || !strings.Contains(got[0], "/a") {
		t.Errorf("seeds = %q, want the first submission's", got)
	}
	if left := rdb.Keys(ctx, jk.Tag()+":seeds:staging:*").Val(); len(left) != 0 {
		t.Errorf("staging lists left behind: %q", left)
	}

	// Once finished, the same name may be submitted again: a new run,
	// pending for the masters, its finish time cleared.
	rdb.HSet(ctx, jk.State(), cluster.StateField, cluster.StateFinished, cluster.StateFinishedAt, "2026-01-01T00:00:00Z")
	if err := c.Submit(ctx, testJob("once", "https://example.com/c")); err != nil {
		t.Fatalf("Submit after the job finished = %v", err)
	}
	if st, err := c.Status(ctx, "once"); err != nil || st.State != cluster.StatePending || st.FinishedAt != "" {
		t.Errorf("resubmitted job = %+v, %v; want pending, not finished", st, err)
	}
}
