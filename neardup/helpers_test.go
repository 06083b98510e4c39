package neardup

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// backend is a Redis server the scripts run on: the real one, and
// miniredis, the embedded Redis of crawler run, whose Lua has no bit
// library. Expiry here is by the entries' scores against the server clock
// (real time on both), not by key TTLs, which miniredis does not run down.
type backend struct {
	name string
	open func(testing.TB) (*redis.Client, string)
}

var backends = []backend{
	{"redis", func(tb testing.TB) (*redis.Client, string) {
		rdb, ks := testenv.Redis(tb)
		return rdb, ks.Job("j").Simhash()
	}},
	{"miniredis", func(tb testing.TB) (*redis.Client, string) {
		mr := miniredis.RunT(tb)
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		tb.Cleanup(func() { rdb.Close() })
		return rdb, "{" + testenv.UniquePrefix(tb) + "}:simhash"
	}},
}

// onBackends runs fn as a subtest on every backend.
func onBackends(t *testing.T, fn func(t *testing.T, be backend)) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { fn(t, be) })
	}
}

// newTestIndex returns an index with the given window on be, with its
// client; now, if not nil, is its clock.
func newTestIndex(t *testing.T, be backend, window time.Duration, now func() time.Time) (*Index, *redis.Client) {
	t.Helper()
	rdb, ns := be.open(t)
	o := DefaultOptions(ns, window)
	o.Now = now
	x, err := New(rdb, o)
	if err != nil {
		t.Fatal(err)
	}
	return x, rdb
}

// fakeClock is a settable Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// findOrAdd offers entries and fails the test on an error.
func findOrAdd(t *testing.T, x *Index, entries ...Entry) []Result {
	t.Helper()
	res, err := x.FindOrAdd(context.Background(), entries)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// generation is one generation's log, decoded.
type generation struct {
	key     string
	gen     int64
	ttl     time.Duration
	records []record
	// entries holds the live entries of this generation once every log
	// is replayed in order, by ID.
	entries map[string]entryRec
}

// entryRec is an entry as the logs leave it.
type entryRec struct {
	hash    uint64
	expires time.Time
}

// generations reads and decodes every generation's log the index holds,
// oldest first, and replays them: each generation's entries are those
// whose latest add is in it and that no later record dropped.
func generations(t *testing.T, x *Index, rdb *redis.Client) []generation {
	t.Helper()
	ctx := context.Background()
	var out []generation
	iter := rdb.Scan(ctx, 0, x.keys.logStem()+"*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		n, err := strconv.ParseInt(strings.TrimPrefix(key, x.keys.logStem()), 10, 64)
		if err != nil {
			t.Fatalf("key %s: %v", key, err)
		}
		g := generation{key: key, gen: n, ttl: rdb.PTTL(ctx, key).Val(), entries: map[string]entryRec{}}
		g.records = decodeLog(t, key, []byte(rdb.Get(ctx, key).Val()))
		out = append(out, g)
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b generation) int { return int(a.gen - b.gen) })
	in := map[string]int{} // id -> the generation of its live entry
	for i, g := range out {
		for _, r := range g.records {
			if j, ok := in[r.id]; ok {
				delete(out[j].entries, r.id)
				delete(in, r.id)
			}
			if r.kind == kindAdd {
				g.entries[r.id] = entryRec{r.hash, time.UnixMilli(r.expires)}
				in[r.id] = i
			}
		}
	}
	return out
}

// decodeLog returns the records of a log, failing the test unless it is
// whole records.
func decodeLog(t *testing.T, key string, b []byte) []record {
	t.Helper()
	var out []record
	for len(b) > 0 {
		r, at, n, err := parseRecord(b)
		if err != nil || n == 0 {
			t.Fatalf("%s: %d bytes left that are not a record: %v", key, len(b), err)
		}
		r.id = string(b[at:n])
		out = append(out, r)
		b = b[n:]
	}
	return out
}

// checkIndex fails the test unless the logs are whole: each is whole
// records and expires within the window, every add has an expiry, and a
// drop names an ID that had an entry (no record is written for nothing).
func checkIndex(t *testing.T, x *Index, rdb *redis.Client) {
	t.Helper()
	live := map[string]bool{}
	for _, g := range generations(t, x, rdb) {
		if g.ttl <= 0 || g.ttl > x.opts.Window {
			t.Fatalf("%s expires in %v, want within the window %v", g.key, g.ttl, x.opts.Window)
		}
		for _, r := range g.records {
			switch r.kind {
			case kindAdd:
				if r.expires == 0 {
					t.Fatalf("%s: add of %s without an expiry", g.key, r.id)
				}
				live[r.id] = true
			case kindDrop:
				if !live[r.id] {
					t.Fatalf("%s: drop of %s, which had no entry", g.key, r.id)
				}
				delete(live, r.id)
			}
		}
	}
}

// members returns what the index holds for id after replay: its entry as
// "entry: hash id" (the hash in hex) after its generation's key.
func members(t *testing.T, x *Index, rdb *redis.Client, id string) []string {
	t.Helper()
	var out []string
	for _, g := range generations(t, x, rdb) {
		if e, ok := g.entries[id]; ok {
			out = append(out, fmt.Sprintf("%s entry: %016x %s", g.key, e.hash, id))
		}
	}
	return out
}

// entryLines is what members returns for an entry of id with hash h in
// generation key gen.
func entryLines(gen, id string, h uint64) []string {
	return []string{fmt.Sprintf("%s entry: %016x %s", gen, h, id)}
}

// held returns the number of records in the generations the index reads
// (the current one, by the index's clock, and the one before) and of live
// entries.
func held(t *testing.T, x *Index, rdb *redis.Client) (records, entries int) {
	t.Helper()
	cur := x.opts.Now().UnixMilli() / x.opts.Window.Milliseconds()
	for _, g := range generations(t, x, rdb) {
		if g.gen >= cur-1 {
			records += len(g.records)
			entries += len(g.entries)
		}
	}
	return records, entries
}

// generationOf returns the generation holding id's entry.
func generationOf(t *testing.T, x *Index, rdb *redis.Client, id string) generation {
	t.Helper()
	for _, g := range generations(t, x, rdb) {
		if _, ok := g.entries[id]; ok {
			return g
		}
	}
	t.Fatalf("no entry of %s", id)
	return generation{}
}

// heldIDs returns the hash of every id the index holds.
func heldIDs(t *testing.T, x *Index, rdb *redis.Client) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, g := range generations(t, x, rdb) {
		for id, e := range g.entries {
			out[id] = e.hash
		}
	}
	return out
}

// sameLines reports whether a and b hold the same lines in any order.
func sameLines(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
