package slave

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/store"
)

// idleSlave is a slave that is not run, with its running jobs loaded, for
// tests that drive its parts; it returns the job named name.
func idleSlave(t *testing.T, ctx context.Context, rdb *redis.Client, keys cluster.Keys, name string, items ItemStore) (*Slave, *job) {
	t.Helper()
	s, err := New(DefaultOptions(), Deps{Redis: rdb, Keys: keys, Store: items})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.jobs.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	j := s.jobs.byName[name]
	if j == nil {
		t.Fatalf("job %s not loaded", name)
	}
	return s, j
}

// hold takes n tasks of j's queue and holds them, as dispatch does.
func hold(t *testing.T, ctx context.Context, s *Slave, j *job, n int) []*work {
	t.Helper()
	ds, err := j.queue.Take(ctx, n, time.Minute)
	if err != nil || len(ds) != n {
		t.Fatalf("take %d: %d, %v", n, len(ds), err)
	}
	works := make([]*work, n)
	for i, d := range ds {
		task, err := cluster.DecodeTask(d.Entry)
		if err != nil {
			t.Fatal(err)
		}
		works[i] = &work{job: j, raw: d.Entry, task: task, deliveries: d.Count}
		s.held.add(j, d.Entry, time.Now().Add(time.Minute))
	}
	return works
}

// detailPaths are n detail pages' paths.
func detailPaths(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("/p/%d", i)
	}
	return out
}

// isAck matches the acknowledgement script's calls of job jk (the only
// script a slave gives the job's stats hash); a NOSCRIPT fallback's EVAL
// is not one.
func isAck(jk cluster.JobKeys) func(redis.Cmder) bool {
	return func(cmd redis.Cmder) bool {
		return cmd.Name() == "evalsha" && containsArg(cmd.Args(), jk.Stats())
	}
}

// TestAcker_flush: outcomes are acknowledged in one script call per
// ackBatch of a job; when a call fails (Redis away) the outcomes from it
// on are kept, still held, and sent again, each counted exactly once.
func TestAcker_flush(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fail    int64  // ack calls that fail first
		flushes []bool // what each flush reports
	}{
		{"batched", 0, []bool{true}},
		{"kept when Redis fails", 1, []bool{false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb, keys := testenv.Redis(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			n := 2*ackBatch + 50
			jk := runningJob(t, ctx, rdb, keys, "acks", "http://127.0.0.1:1", detailPaths(n)...)
			hook := &failingScripts{match: isAck(jk)}
			hook.n.Store(tc.fail)
			rdb.AddHook(hook)
			s, j := idleSlave(t, ctx, rdb, keys, "acks", jsonlStore(t))
			for _, w := range hold(t, ctx, s, j, n) {
				s.acks.add(j, ledger.Outcome{Task: w.raw, FP: w.task.FP})
			}
			for i, want := range tc.flushes {
				if got := s.acks.flush(ctx); got != want {
					t.Fatalf("flush %d = %v, want %v", i, got, want)
				}
				if held := len(s.held.snapshot()[j]); !want && held != n {
					t.Errorf("after a failed flush %d tasks held, want all %d", held, n)
				}
			}
			if got, want := hook.calls.Load(), int64(3)+tc.fail; got != want {
				t.Errorf("%d acknowledgement calls, want %d (batches of %d)", got, want, ackBatch)
			}
			if got := rdb.HGet(ctx, jk.Stats(), cluster.StatStored).Val(); got != fmt.Sprint(n) {
				t.Errorf("stored = %s, want %d", got, n)
			}
			if held, inflight := len(s.held.snapshot()), rdb.ZCard(ctx, jk.Inflight(0)).Val(); held != 0 || inflight != 0 {
				t.Errorf("%d jobs with tasks held, %d in flight; want none", held, inflight)
			}
			if !s.acks.empty() {
				t.Error("outcomes left pending")
			}
		})
	}
}

// batchItems is a real store, recording the size of each batch of visits
// written to it; the item whose URL ends with fail is refused.
type batchItems struct {
	ItemStore
	fail  string
	mu    sync.Mutex
	sizes []int
}

func (b *batchItems) SaveVisits(ctx context.Context, now time.Time, visits []store.Visit) []store.VisitResult {
	b.mu.Lock()
	b.sizes = append(b.sizes, len(visits))
	b.mu.Unlock()
	res := make([]store.VisitResult, len(visits))
	var kept []store.Visit
	var at []int
	for i, v := range visits {
		if strings.HasSuffix(v.Item.URL, b.fail) {
			res[i].Err = errTooLarge
			continue
		}
		kept, at = append(kept, v), append(at, i)
	}
	for k, r := range b.ItemStore.SaveVisits(ctx, now, kept) {
		res[at[k]] = r
	}
	return res
}

// TestCommitter_commit: items are committed in batches of commitBatch,
// one store write each; their Found entries go to the job's Found list
// and their outcomes to the acker. An item the store refuses lets its
// task go: not acknowledged, no longer held, its reason noted for its
// next delivery.
func TestCommitter_commit(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := commitBatch + 44
	jk := runningJob(t, ctx, rdb, keys, "commits", "http://127.0.0.1:1", detailPaths(n)...)
	items := &batchItems{ItemStore: jsonlStore(t), fail: "/p/7"}
	s, j := idleSlave(t, ctx, rdb, keys, "commits", items)
	rng := rand.New(rand.NewPCG(1, 2)) // far-apart simhashes: no near-duplicates
	var refused *work
	works := hold(t, ctx, s, j, n)
	raws := make([]string, n)
	for i, w := range works {
		raws[i] = w.raw
	}
	if _, err := j.queue.MarkStarted(ctx, raws); err != nil { // their fetches began
		t.Fatal(err)
	}
	for i, w := range works {
		found := ""
		if i == 0 {
			found = cluster.FoundLinks{Page: w.task.URL, Kind: jobspec.KindDetail}.Encode()
		}
		if strings.HasSuffix(w.task.URL, "/p/7") {
			refused = w
		}
		s.commits.add(w, store.Item{ID: store.ItemID("commits", w.task.FP), URL: w.task.URL, Job: "commits",
			Fingerprint: w.task.FP, Simhash: int64(rng.Uint64())}, 0, found)
	}
	for batch := s.commits.take(); len(batch) > 0; batch = s.commits.take() {
		s.commits.commit(ctx, batch)
	}
	if !s.acks.flush(ctx) {
		t.Fatal("acknowledgement failed")
	}
	if fmt.Sprint(items.sizes) != fmt.Sprint([]int{commitBatch, n - commitBatch}) {
		t.Errorf("store batches %v, want %d then %d", items.sizes, commitBatch, n-commitBatch)
	}
	if got := rdb.HGet(ctx, jk.Stats(), cluster.StatStored).Val(); got != fmt.Sprint(n-1) {
		t.Errorf("stored = %s, want %d (all but the refused item)", got, n-1)
	}
	if got := rdb.LLen(ctx, jk.Found()).Val(); got != 1 {
		t.Errorf("%d Found entries, want the one item's", got)
	}
	if held := s.held.snapshot()[j]; len(held) != 0 {
		t.Errorf("%d tasks still held, want none (the refused one let go)", len(held))
	}
	if _, err := j.queue.Requeue(ctx, []string{refused.raw}); err != nil { // as the orphan sweep does
		t.Fatal(err)
	}
	ds, err := j.queue.Take(ctx, 1, time.Minute)
	if err != nil || len(ds) != 1 || ds[0].Entry != refused.raw || ds[0].Count != 2 || !strings.Contains(ds[0].LastError, errTooLarge.Error()) {
		t.Errorf("next delivery %+v (%v), want the refused task's second, with the store's error", ds, err)
	}
}
