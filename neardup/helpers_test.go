package neardup

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
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

// generation is one generation's HASH, decoded.
type generation struct {
	key     string
	ttl     time.Duration
	bands   map[string][]bandRec // band field -> its records
	entries map[string]entryRec  // key -> its entry
}

// bandRec is a record of a band field.
type bandRec struct {
	hash uint64
	key  string
}

// entryRec is the value of an entry field.
type entryRec struct {
	hash    uint64
	expires time.Time
	id      string
}

// ids returns the hash of every id g holds.
func (g generation) ids() map[string]uint64 {
	out := map[string]uint64{}
	for _, e := range g.entries {
		out[e.id] = e.hash
	}
	return out
}

// generations reads and decodes every generation the index holds.
func generations(t *testing.T, x *Index, rdb *redis.Client) []generation {
	t.Helper()
	ctx := context.Background()
	var out []generation
	iter := rdb.Scan(ctx, 0, x.keys.genStem()+"*", 1000).Iterator()
	for iter.Next(ctx) {
		g := generation{key: iter.Val(), ttl: rdb.PTTL(ctx, iter.Val()).Val(),
			bands: map[string][]bandRec{}, entries: map[string]entryRec{}}
		for f, v := range rdb.HGetAll(ctx, g.key).Val() {
			decodeField(t, g, f, v)
		}
		out = append(out, g)
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// decodeField adds field f, value v, to g.
func decodeField(t *testing.T, g generation, f, v string) {
	t.Helper()
	switch {
	case len(f) == 3 && f[0] >= bandPrefix && f[0] < bandPrefix+4:
		if len(v)%16 != 0 || v == "" {
			t.Fatalf("%s: band field %q holds %d bytes", g.key, f, len(v))
		}
		for i := 0; i < len(v); i += 16 {
			g.bands[f] = append(g.bands[f], bandRec{binary.BigEndian.Uint64([]byte(v[i : i+8])), v[i+8 : i+16]})
		}
	case len(f) == 9 && f[0] == entryPrefix && len(v) > 8:
		ms, id, ok := strings.Cut(v[8:], " ")
		exp, err := strconv.ParseInt(ms, 10, 64)
		if !ok || err != nil {
			t.Fatalf("%s: entry field %x holds %q", g.key, f, v)
		}
		g.entries[f[1:]] = entryRec{binary.BigEndian.Uint64([]byte(v[:8])), time.UnixMilli(exp), id}
	default:
		t.Fatalf("%s: unknown field %q = %q", g.key, f, v)
	}
}

// checkIndex fails the test unless the index is whole: in every
// generation each entry is named by its id's key and listed once in its
// four band fields, and the band fields list nothing else; an id has one
// entry at most; every generation expires.
func checkIndex(t *testing.T, x *Index, rdb *redis.Client) {
	t.Helper()
	seen := map[string]string{}
	for _, g := range generations(t, x, rdb) {
		if g.ttl <= 0 || g.ttl > x.opts.Window {
			t.Fatalf("%s expires in %v, want within the window %v", g.key, g.ttl, x.opts.Window)
		}
		for key, e := range g.entries {
			if other, ok := seen[e.id]; ok {
				t.Fatalf("id %s has an entry in %s and in %s", e.id, other, g.key)
			}
			seen[e.id] = g.key
			if key != entryKey(e.id) {
				t.Fatalf("%s: entry of %s under key %x", g.key, e.id, key)
			}
			for i := range 4 {
				if n := count(g.bands[bandField(i, e.hash)], bandRec{e.hash, key}); n != 1 {
					t.Fatalf("%s: %s's record is listed %d times in band %d", g.key, e.id, n, i)
				}
			}
		}
		if records(g) != 4*len(g.entries) {
			t.Fatalf("%s: %d entries, %d band records: some belong to no entry", g.key, len(g.entries), records(g))
		}
	}
}

func count(recs []bandRec, r bandRec) int {
	n := 0
	for _, x := range recs {
		if x == r {
			n++
		}
	}
	return n
}

// records is the number of band records of g.
func records(g generation) int {
	n := 0
	for _, rs := range g.bands {
		n += len(rs)
	}
	return n
}

// members returns what the index holds for id: its band records as
// "band i: hash", its entry field as "entry: hash id" (hashes in hex),
// each after its generation's key.
func members(t *testing.T, x *Index, rdb *redis.Client, id string) []string {
	t.Helper()
	key := entryKey(id)
	var out []string
	for _, g := range generations(t, x, rdb) {
		for f, rs := range g.bands {
			for _, r := range rs {
				if r.key == key {
					out = append(out, fmt.Sprintf("%s band %d: %016x", g.key, f[0]-bandPrefix, r.hash))
				}
			}
		}
		if e, ok := g.entries[key]; ok {
			out = append(out, fmt.Sprintf("%s entry: %016x %s", g.key, e.hash, e.id))
		}
	}
	return out
}

// entryLines is what members returns for an entry of id with hash h in
// generation key gen.
func entryLines(gen, id string, h uint64) []string {
	var out []string
	for i := range 4 {
		out = append(out, fmt.Sprintf("%s band %d: %016x", gen, i, h))
	}
	return append(out, fmt.Sprintf("%s entry: %016x %s", gen, h, id))
}

// held returns the number of band records and of entries the index holds.
func held(t *testing.T, x *Index, rdb *redis.Client) (bands, entries int) {
	t.Helper()
	for _, g := range generations(t, x, rdb) {
		bands += records(g)
		entries += len(g.entries)
	}
	return bands, entries
}

// generationOf returns the generation holding id's entry.
func generationOf(t *testing.T, x *Index, rdb *redis.Client, id string) generation {
	t.Helper()
	for _, g := range generations(t, x, rdb) {
		if _, ok := g.entries[entryKey(id)]; ok {
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
		maps.Copy(out, g.ids())
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
