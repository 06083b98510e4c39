package neardup

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

func TestIndex_FindOrAdd(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		x, rdb := newTestIndex(t, be, time.Hour, nil)
		base := Simhash(zhA)
		find := func(id string, h uint64) Result { t.Helper(); return findOrAdd(t, x, Entry{id, h})[0] }
		t.Run("first is added", func(t *testing.T) {
			if r := find("a", base); r.Duplicate() || r.Distance != -1 {
				t.Fatalf("empty index: %+v", r)
			}
		})
		t.Run("near duplicate finds the earlier id", func(t *testing.T) {
			h := Simhash(strings.Replace(zhA, "六条", "七条", 1))
			if r := find("b", h); r.Of != "a" || r.Distance != hamming(h, base) {
				t.Fatalf("got %+v, want a at %d", r, hamming(h, base))
			}
		})
		t.Run("distance 3 in every band position", func(t *testing.T) {
			flipped := base ^ (1 << 63) ^ (1 << 40) ^ (1 << 5) // bands 0, 1 and 3 differ
			if r := find("c", flipped); r.Of != "a" || r.Distance != 3 {
				t.Fatalf("got %+v", r)
			}
		})
		t.Run("distance 4 is new", func(t *testing.T) {
			far := base ^ (1 << 63) ^ (1 << 62) ^ (1 << 61) ^ (1 << 60)
			if r := find("d", far); r.Duplicate() {
				t.Fatalf("matched at distance 4: %+v", r)
			}
		})
		t.Run("closest wins", func(t *testing.T) {
			// d is 4 bits from a; one bit from d is 3 from a (in d's
			// bands too) but 1 from d.
			if r := find("e", base^(1<<63)^(1<<62)^(1<<61)); r.Of != "d" || r.Distance != 1 {
				t.Fatalf("got %+v, want d at 1", r)
			}
		})
		t.Run("same id is not its own duplicate", func(t *testing.T) {
			h := Simhash(zhB)
			find("f", h)
			if r := find("f", h); r.Duplicate() {
				t.Fatalf("matched itself: %+v", r)
			}
		})
		t.Run("entries and their generation expire with the window", func(t *testing.T) {
			checkIndex(t, x, rdb)
			g := generationOf(t, x, rdb, "a")
			if g.ttl <= 50*time.Minute || g.ttl > time.Hour {
				t.Fatalf("generation %s expires in %v", g.key, g.ttl)
			}
			if at := g.entries["a"].expires; time.Until(at) > time.Hour+time.Minute || time.Until(at) < 50*time.Minute {
				t.Fatalf("entry a expires at %v, want in about an hour", at)
			}
		})
		t.Run("empty id refused", func(t *testing.T) {
			if _, err := x.FindOrAdd(ctx, []Entry{{"", 1}}); !errors.Is(err, ErrEmptyID) {
				t.Fatalf("err = %v", err)
			}
		})
	})
}

// TestIndex_Expiry: an entry is forgotten one window after its add, and a
// call that reads its band keys afterwards removes it from them.
func TestIndex_Expiry(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		clock := newFakeClock()
		x, rdb := newTestIndex(t, be, time.Hour, clock.Now)
		h := Simhash(enA)
		findOrAdd(t, x, Entry{"old", h})
		t.Run("found to the end of the window", func(t *testing.T) {
			clock.Add(time.Hour - time.Millisecond)
			if r := findOrAdd(t, x, Entry{"dup", h ^ 1})[0]; r.Of != "old" {
				t.Fatalf("got %+v", r)
			}
		})
		t.Run("forgotten at its end", func(t *testing.T) {
			clock.Add(time.Millisecond)
			if r := findOrAdd(t, x, Entry{"new", h})[0]; r.Duplicate() {
				t.Fatalf("found an expired entry: %+v", r)
			}
		})
		t.Run("held until its generation expires", func(t *testing.T) {
			// Generations expire by Redis's own clock (TestIndex_KeysExpire).
			checkIndex(t, x, rdb)
			old, cur := generationOf(t, x, rdb, "old"), generationOf(t, x, rdb, "new")
			if old.key == cur.key || len(old.entries) != 1 {
				t.Fatalf("expired entry in %s with %d entries, new in %s: want a generation of its own", old.key, len(old.entries), cur.key)
			}
			if m := members(t, x, rdb, "new"); !sameLines(m, entryLines(cur.key, "new", h)) {
				t.Fatalf("new entry held as %v", m)
			}
		})
	})
}

// TestIndex_KeysExpire: a job that stops leaves nothing behind once its
// window has passed (real Redis: miniredis does not run TTLs down).
func TestIndex_KeysExpire(t *testing.T) {
	const window = 300 * time.Millisecond
	x, rdb := newTestIndex(t, backends[0], window, nil)
	findOrAdd(t, x, Entry{"a", 0}, Entry{"b", 0x00ff00ff00ff00ff}, Entry{"c", ^uint64(0)})
	checkIndex(t, x, rdb)
	if m := members(t, x, rdb, "b"); len(m) != 1 {
		t.Fatalf("b held as %v, want its entry", m)
	}
	testenv.WaitServerTime(t, rdb, testenv.ServerTime(t, rdb).Add(window+time.Millisecond))
	keys, err := rdb.Keys(context.Background(), x.opts.Namespace+"*").Result()
	if err != nil || len(keys) != 0 {
		t.Fatalf("keys left after the window: %v %v", keys, err)
	}
}

// TestIndex_Replace: a page fetched again with other text replaces its
// entry; its old bands no longer hold it.
func TestIndex_Replace(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		x, rdb := newTestIndex(t, be, time.Hour, nil)
		h1, h2 := Simhash(enA), Simhash(enB)
		findOrAdd(t, x, Entry{"p", h1})
		t.Run("new text replaces the entry", func(t *testing.T) {
			if r := findOrAdd(t, x, Entry{"p", h2})[0]; r.Duplicate() {
				t.Fatalf("got %+v", r)
			}
			checkIndex(t, x, rdb)
			want := entryLines(generationOf(t, x, rdb, "p").key, "p", h2)
			if got := members(t, x, rdb, "p"); !sameLines(got, want) {
				t.Fatalf("p held as %v, want %v", got, want)
			}
		})
		t.Run("its old text is no longer found", func(t *testing.T) {
			if r := findOrAdd(t, x, Entry{"q", h1 ^ 3})[0]; r.Duplicate() {
				t.Fatalf("found the replaced entry: %+v", r)
			}
		})
		t.Run("a page that turns into a duplicate drops its entry", func(t *testing.T) {
			if r := findOrAdd(t, x, Entry{"p", h1})[0]; r.Of != "q" || r.Distance != 2 {
				t.Fatalf("got %+v", r)
			}
			if m := members(t, x, rdb, "p"); len(m) != 0 {
				t.Fatalf("p still held: %v", m)
			}
			checkIndex(t, x, rdb)
		})
	})
}

// TestIndex_Generations: an entry added at the end of one window's
// generation is found from the next one until it expires, and is replaced
// there by its page's new text.
func TestIndex_Generations(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		const window = time.Hour
		clock := newFakeClock()
		clock.t = clock.t.Truncate(window).Add(window - time.Millisecond)
		x, rdb := newTestIndex(t, be, window, clock.Now)
		h1, h2 := Simhash(enA), Simhash(enB)
		findOrAdd(t, x, Entry{"a", h1}, Entry{"b", h2})
		first := generationOf(t, x, rdb, "a").key
		if want := x.keys.logStem() + strconv.FormatInt(clock.Now().UnixMilli()/window.Milliseconds(), 10); first != want {
			t.Fatalf("a added to %s, want %s", first, want)
		}
		clock.Add(2 * time.Millisecond)
		t.Run("found from the next generation", func(t *testing.T) {
			if r := findOrAdd(t, x, Entry{"c", h1 ^ 1<<9})[0]; r.Of != "a" || r.Distance != 1 {
				t.Fatalf("got %+v", r)
			}
		})
		t.Run("replaced from the next generation", func(t *testing.T) {
			h3 := h2 ^ 0xffff0000ffff0000
			if r := findOrAdd(t, x, Entry{"b", h3})[0]; r.Duplicate() {
				t.Fatalf("got %+v", r)
			}
			checkIndex(t, x, rdb)
			g := generationOf(t, x, rdb, "b")
			if g.key == first || !sameLines(members(t, x, rdb, "b"), entryLines(g.key, "b", h3)) {
				t.Fatalf("b held as %v, want its new hash in the new generation", members(t, x, rdb, "b"))
			}
			if r := findOrAdd(t, x, Entry{"d", h2 ^ 1})[0]; r.Duplicate() {
				t.Fatalf("b's old text found: %+v", r)
			}
		})
		t.Run("forgotten a window after its add", func(t *testing.T) {
			clock.Add(window - 2*time.Millisecond)
			if r := findOrAdd(t, x, Entry{"e", h1 ^ 1<<9})[0]; r.Duplicate() {
				t.Fatalf("found an expired entry: %+v", r)
			}
		})
	})
}

// TestIndex_Mirror: a process that starts late reads what others wrote;
// one whose logs expired, or were replaced by others, while it held them
// reads them again; a log that is not records is an error that names it.
func TestIndex_Mirror(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		x, rdb := newTestIndex(t, be, time.Hour, nil)
		h := Simhash(enA)
		findOrAdd(t, x, Entry{"a", h}, Entry{"b", ^h})
		t.Run("a late process finds what others added", func(t *testing.T) {
			late, err := New(rdb, x.opts)
			if err != nil {
				t.Fatal(err)
			}
			if r := findOrAdd(t, late, Entry{"c", h ^ 1})[0]; r.Of != "a" || r.Distance != 1 {
				t.Fatalf("got %+v, want a at 1", r)
			}
			if r := findOrAdd(t, x, Entry{"d", h ^ 2})[0]; r.Of != "a" {
				t.Fatalf("the first process missed the late one's call: %+v", r)
			}
		})
		t.Run("a long log is read over several replies", func(t *testing.T) {
			late, err := New(rdb, x.opts)
			if err != nil {
				t.Fatal(err)
			}
			late.maxReply = 7 // records are cut across replies
			if r := findOrAdd(t, late, Entry{"c2", ^h ^ 1})[0]; r.Of != "b" || r.Distance != 1 {
				t.Fatalf("got %+v, want b at 1", r)
			}
		})
		t.Run("logs gone while held are read again", func(t *testing.T) {
			g := generationOf(t, x, rdb, "a")
			if err := rdb.Del(context.Background(), g.key).Err(); err != nil {
				t.Fatal(err)
			}
			if r := findOrAdd(t, x, Entry{"e", h ^ 4})[0]; r.Duplicate() {
				t.Fatalf("found an entry whose log is gone: %+v", r)
			}
			if r := findOrAdd(t, x, Entry{"f", h ^ 4 ^ 8})[0]; r.Of != "e" {
				t.Fatalf("got %+v, want e", r)
			}
			checkIndex(t, x, rdb)
		})
		t.Run("a log replaced while held is read again", func(t *testing.T) {
			g := generationOf(t, x, rdb, "e")
			if err := rdb.Del(context.Background(), g.key).Err(); err != nil {
				t.Fatal(err)
			}
			other, err := New(rdb, x.opts) // after a reset, with more bytes than x held
			if err != nil {
				t.Fatal(err)
			}
			var many []Entry
			for i := range 20 {
				many = append(many, Entry{fmt.Sprintf("https://example.com/a/long/path/%d", i), uint64(i+1) * 0x9e3779b97f4a7c15})
			}
			for _, r := range findOrAdd(t, other, many...) {
				if r.Duplicate() {
					t.Fatalf("spread hashes matched: %+v", r)
				}
			}
			if r := findOrAdd(t, x, Entry{"h", h ^ 4 ^ 8 ^ 16})[0]; r.Duplicate() {
				t.Fatalf("found an entry of the replaced log: %+v", r)
			}
			if r := findOrAdd(t, x, Entry{"i", many[7].Hash ^ 1})[0]; r.Of != many[7].ID {
				t.Fatalf("got %+v, want %s", r, many[7].ID)
			}
			checkIndex(t, x, rdb)
		})
		t.Run("a log that lost its last appends and grew again is read again", func(t *testing.T) {
			ctx := context.Background()
			g := generationOf(t, x, rdb, "https://example.com/a/long/path/7")
			whole := rdb.Get(ctx, g.key).Val()
			findOrAdd(t, x, Entry{"lost", ^h ^ 0xff00})
			// A failover: the log is back to what it was before x's last
			// append, and another process appends more than that.
			if err := rdb.Set(ctx, g.key, whole, time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
			other, err := New(rdb, x.opts)
			if err != nil {
				t.Fatal(err)
			}
			findOrAdd(t, other, Entry{"https://example.com/another/long/path/after/the/failover", ^h ^ 0xff0000})
			if r := findOrAdd(t, x, Entry{"j", ^h ^ 0xff0000 ^ 1})[0]; r.Of != "https://example.com/another/long/path/after/the/failover" {
				t.Fatalf("got %+v, want the entry added after the failover", r)
			}
			checkIndex(t, x, rdb)
		})
		t.Run("a corrupt log is named", func(t *testing.T) {
			g := generationOf(t, x, rdb, "https://example.com/a/long/path/7")
			if err := rdb.Append(context.Background(), g.key, "x-not-a-record-x-not-a-record").Err(); err != nil {
				t.Fatal(err)
			}
			_, err := x.FindOrAdd(context.Background(), []Entry{{"g", h}})
			if err == nil || !strings.Contains(err.Error(), "unknown record kind") || !strings.Contains(err.Error(), "generation") {
				t.Fatalf("err = %v, want the corrupt log named", err)
			}
		})
	})
}

// TestIndex_Held: the mirror counts every add it replayed, replaced ones
// too, and its memory estimate covers at least its chain heads and the
// records it holds.
func TestIndex_Held(t *testing.T) {
	x, _ := newTestIndex(t, backends[0], time.Hour, nil)
	rng := rand.New(rand.NewPCG(5, 6))
	entries := make([]Entry, 1000)
	for i := range entries {
		entries[i] = Entry{ID: "https://example.com/page/" + strconv.Itoa(i), Hash: rng.Uint64()}
	}
	findOrAdd(t, x, entries...)
	findOrAdd(t, x, Entry{entries[0].ID, rng.Uint64()}) // replaces its entry
	n, bytes := x.Held()
	if n != 1001 {
		t.Errorf("held %d entries, want 1001", n)
	}
	records := int64(1001 * (recordHeader + len(entries[999].ID)))
	if least := int64(4*bandValues*4) + records; bytes < least || bytes > 4*least {
		t.Errorf("estimated %d bytes, want between %d and %d", bytes, least, 4*least)
	}
}

// TestIndex_Distances: pages 0 to 3 bits from an entry, the bits
// anywhere, find it at their Hamming distance; pages 4 bits away do not.
func TestIndex_Distances(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		x, _ := newTestIndex(t, be, time.Hour, nil)
		rng := rand.New(rand.NewPCG(8, 9))
		bases := make([]Entry, 50)
		for i := range bases {
			bases[i] = Entry{ID: "base" + strconv.Itoa(i), Hash: rng.Uint64()}
		}
		findOrAdd(t, x, bases...)
		for d := range MaxDistance + 2 {
			queries := make([]Entry, 100)
			for i := range queries {
				h := bases[i%len(bases)].Hash
				for _, bit := range rng.Perm(64)[:d] {
					h ^= 1 << bit
				}
				queries[i] = Entry{ID: fmt.Sprintf("q%d-%d", d, i), Hash: h}
			}
			for i, r := range findOrAdd(t, x, queries...) {
				base := bases[i%len(bases)].ID
				if found := r.Of == base && r.Distance == d; found != (d <= MaxDistance) {
					t.Fatalf("%d bits from %s: got %+v", d, base, r)
				}
			}
		}
	})
}

// TestIndex_Distance0 finds identical hashes only.
func TestIndex_Distance0(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		rdb, ns := be.open(t)
		o := DefaultOptions(ns, time.Hour)
		o.Distance = 0
		x, err := New(rdb, o)
		if err != nil {
			t.Fatal(err)
		}
		h := Simhash(zhA)
		res := findOrAdd(t, x, Entry{"a", h}, Entry{"b", h ^ 1}, Entry{"c", h})
		if want := []Result{{"", -1}, {"", -1}, {"a", 0}}; !reflect.DeepEqual(res, want) {
			t.Fatalf("got %+v, want %+v", res, want)
		}
	})
}

// TestIndex_Recrawl: rounds of the same pages, each round after the
// window with changed text: the index holds one entry per page, and the
// logs it reads two rounds of records, never more.
func TestIndex_Recrawl(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		const pages = 40
		clock := newFakeClock()
		x, rdb := newTestIndex(t, be, time.Hour, clock.Now)
		rng := rand.New(rand.NewPCG(1, 2))
		for round := range 3 {
			entries := make([]Entry, pages)
			for i := range entries {
				entries[i] = Entry{ID: "page" + strconv.Itoa(i), Hash: rng.Uint64()}
			}
			for _, r := range findOrAdd(t, x, entries...) {
				if r.Duplicate() {
					t.Fatalf("round %d: random hash matched %+v", round, r)
				}
			}
			checkIndex(t, x, rdb)
			// The logs the index reads hold this round and the one before.
			if records, ids := held(t, x, rdb); records != min(round+1, 2)*pages || ids != pages {
				t.Fatalf("round %d: %d records, %d ids; want %d, %d", round, records, ids, min(round+1, 2)*pages, pages)
			}
			clock.Add(time.Hour)
		}
	})
}

// TestIndex_BatchIsSequential: one call with many entries answers exactly
// as one call per entry, and leaves the same index behind.
func TestIndex_BatchIsSequential(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		batched, rdb := newTestIndex(t, be, time.Hour, nil)
		single, err := New(rdb, DefaultOptions(batched.opts.Namespace+"-single", time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		entries := mixedEntries(300)
		got := findOrAdd(t, batched, entries...)
		var want []Result
		for _, e := range entries {
			want = append(want, findOrAdd(t, single, e)...)
		}
		if !reflect.DeepEqual(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("entry %d %+v: batched %+v, one by one %+v", i, entries[i], got[i], want[i])
				}
			}
		}
		dups := 0
		for _, r := range got {
			if r.Duplicate() {
				dups++
			}
		}
		if dups < 50 || dups > 250 {
			t.Fatalf("%d duplicates among %d: the mix does not test much", dups, len(entries))
		}
		checkIndex(t, batched, rdb)
		checkIndex(t, single, rdb)
		if a, b := heldIDs(t, batched, rdb), heldIDs(t, single, rdb); !reflect.DeepEqual(a, b) {
			t.Fatalf("batched holds %d ids, one by one %d, or other hashes", len(a), len(b))
		}
	})
}

// mixedEntries returns n entries: clusters of near-duplicates, unrelated
// hashes and ids offered again with other text.
func mixedEntries(n int) []Entry {
	rng := rand.New(rand.NewPCG(7, 7))
	bases := make([]uint64, 20)
	for i := range bases {
		bases[i] = rng.Uint64()
	}
	out := make([]Entry, n)
	for i := range out {
		id := "u" + strconv.Itoa(rng.IntN(n))
		h := rng.Uint64()
		if rng.IntN(2) == 0 {
			h = bases[rng.IntN(len(bases))]
			for range rng.IntN(5) { // 0..4 bits: some within 3 of each other, some not
				h ^= 1 << rng.IntN(64)
			}
		}
		out[i] = Entry{ID: id, Hash: h}
	}
	return out
}

// TestIndex_Race: near-duplicates in one batch find each other, and so do
// near-duplicates offered by racing callers, each with an index of its own
// (as slaves have) over the same keys: of every cluster exactly one page
// is added and every other page names it.
func TestIndex_Race(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		x, rdb := newTestIndex(t, be, time.Hour, nil)
		defer checkIndex(t, x, rdb)
		t.Run("in one batch", func(t *testing.T) {
			h := Simhash(zhB)
			// y finds x, so y is not added: z, a bit from y, finds x at 2.
			res := findOrAdd(t, x, Entry{"x", h}, Entry{"y", h ^ 1<<17}, Entry{"z", h ^ 1<<17 ^ 1<<50}, Entry{"w", ^h})
			want := []Result{{"", -1}, {"x", 1}, {"x", 2}, {"", -1}}
			if !reflect.DeepEqual(res, want) {
				t.Fatalf("got %+v, want %+v", res, want)
			}
		})
		t.Run("racing callers", func(t *testing.T) {
			const callers, clusters = 6, 40
			rng := rand.New(rand.NewPCG(3, 4))
			bases := make([]uint64, clusters)
			for i := range bases {
				bases[i] = rng.Uint64()
			}
			results := make([][]Result, callers)
			var wg sync.WaitGroup
			for c := range callers {
				wg.Add(1)
				own, err := New(rdb, x.opts)
				if err != nil {
					t.Fatal(err)
				}
				go func() {
					defer wg.Done()
					results[c] = raceCaller(t, own, c, bases)
				}()
			}
			wg.Wait()
			for k := range clusters {
				var added []string
				for c := range callers {
					if !results[c][k].Duplicate() {
						added = append(added, fmt.Sprintf("c%d-k%d", c, k))
					}
				}
				if len(added) != 1 {
					t.Fatalf("cluster %d added %d times: %v", k, len(added), added)
				}
				for c := range callers {
					if r := results[c][k]; r.Duplicate() && r.Of != added[0] {
						t.Fatalf("cluster %d: caller %d found %q, not the added %s", k, c, r.Of, added[0])
					}
				}
			}
		})
	})
}

// raceCaller offers one page of every cluster (its base with one bit of
// its own flipped, so any two pages of a cluster are 2 bits apart), in a
// shuffled order and in batches of 7; it returns the results by cluster.
func raceCaller(t *testing.T, x *Index, c int, bases []uint64) []Result {
	order := rand.New(rand.NewPCG(uint64(c), 9)).Perm(len(bases))
	out := make([]Result, len(bases))
	for start := 0; start < len(order); start += 7 {
		part := order[start:min(start+7, len(order))]
		var entries []Entry
		for _, k := range part {
			entries = append(entries, Entry{ID: fmt.Sprintf("c%d-k%d", c, k), Hash: bases[k] ^ 1<<(c*10)})
		}
		res, err := x.FindOrAdd(context.Background(), entries)
		if err != nil {
			t.Error(err)
			return out
		}
		for j, k := range part {
			out[k] = res[j]
		}
	}
	return out
}

// TestIndex_Split: a batch above MaxBatch is split, in order.
func TestIndex_Split(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		x, rdb := newTestIndex(t, be, time.Hour, nil)
		rng := rand.New(rand.NewPCG(5, 6))
		entries := make([]Entry, MaxBatch+2)
		for i := range entries {
			entries[i] = Entry{ID: strconv.Itoa(i), Hash: rng.Uint64()}
		}
		entries[MaxBatch+1] = Entry{ID: "last", Hash: entries[0].Hash ^ 1}
		res := findOrAdd(t, x, entries...)
		if len(res) != len(entries) || res[MaxBatch+1].Of != "0" {
			t.Fatalf("%d results, last %+v", len(res), res[len(res)-1])
		}
		checkIndex(t, x, rdb)
	})
}

func TestOptions_Validate(t *testing.T) {
	good := DefaultOptions("{crawler:job:j}:simhash", time.Hour)
	if err := good.Validate(); err != nil {
		t.Fatalf("good options: %v", err)
	}
	for _, tt := range []struct {
		field string
		edit  func(*Options)
	}{
		{"Namespace", func(o *Options) { o.Namespace = "" }},
		{"Window", func(o *Options) { o.Window = 0 }},
		{"Window", func(o *Options) { o.Window = time.Millisecond + time.Microsecond }},
		{"Window", func(o *Options) { o.Window = MaxWindow + time.Millisecond }},
		{"Distance", func(o *Options) { o.Distance = 4 }},
		{"Distance", func(o *Options) { o.Distance = -1 }},
	} {
		t.Run(tt.field, func(t *testing.T) {
			o := good
			tt.edit(&o)
			var fe *cluster.FieldError
			if err := o.Validate(); !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("Validate() = %v, want a FieldError for %s", err, tt.field)
			}
		})
	}
}
