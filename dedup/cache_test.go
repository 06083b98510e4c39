package dedup

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/canon"
)

// mirror is the same filter twice, on namespaces of their own: plain
// checks every slice in Redis, cached keeps copies (Options.CacheBytes).
type mirror struct {
	plain, cached *Filter
	rdb           *redis.Client
	plainNS       string
	cachedNS      string
}

func newMirror(t *testing.T, be backend, edit func(*Options)) mirror {
	return newMirrorSlices(t, be, 0, edit)
}

// newMirrorSlices is newMirror with room for copies of that many slices
// (0: plenty).
func newMirrorSlices(t *testing.T, be backend, slices int64, edit func(*Options)) mirror {
	t.Helper()
	plain, rdb, po := newTestFilter(t, be, ModeBloom, edit)
	o := po
	o.Namespace = po.Namespace + "-cached"
	o.CacheBytes = 64 << 20
	if s := newBloomShape(o); slices > 0 {
		o.CacheBytes = slices * int64(s.blocks) * int64(s.blockBytes())
	}
	cached, err := New(rdb, o)
	if err != nil {
		t.Fatal(err)
	}
	return mirror{plain: plain, cached: cached, rdb: rdb, plainNS: po.Namespace, cachedNS: o.Namespace}
}

// admit runs one Admit on both with the same candidates, queues and
// counters under each one's namespace, and fails on any difference.
func (m mirror) admit(t *testing.T, step string, fps []canon.Fingerprint, member string) {
	t.Helper()
	ctx := context.Background()
	var res [2]Result
	for i, f := range []*Filter{m.plain, m.cached} {
		ns := []string{m.plainNS, m.cachedNS}[i]
		b := Batch{Stats: ns + ":stats", NewField: "new", DupField: "dup", OnceKey: ns + ":once", OnceMember: member}
		for j, fp := range fps {
			q := ns + ":q" + strconv.Itoa(j%3)
			b.Candidates = append(b.Candidates, Candidate{FP: fp, Queue: q, Payload: fp.String(), Counter: "c" + strconv.Itoa(j%3)})
		}
		r, err := f.Admit(ctx, b)
		if err != nil {
			t.Fatalf("%s: admit: %v", step, err)
		}
		for k, q := range r.Started { // the queues, each under its own namespace
			r.Started[k] = strings.TrimPrefix(q, ns)
		}
		res[i] = r
	}
	if fmt.Sprint(res[0]) != fmt.Sprint(res[1]) {
		t.Fatalf("%s: plain %v, cached %v", step, res[0], res[1])
	}
}

// contains asks both and fails on any difference.
func (m mirror) contains(t *testing.T, step string, fps []canon.Fingerprint) {
	t.Helper()
	a, err := m.plain.Contains(context.Background(), fps)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.cached.Contains(context.Background(), fps)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("%s: contains: plain %v, cached %v", step, a, b)
	}
}

// sameState fails unless both namespaces hold the same counters, queues
// and slices.
func (m mirror) sameState(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, suffix := range []string{":stats", ":q0", ":q1", ":q2"} {
		var got [2]string
		for i, ns := range []string{m.plainNS, m.cachedNS} {
			switch suffix {
			case ":stats":
				got[i] = fmt.Sprint(m.rdb.HGetAll(ctx, ns+suffix).Val())
			default:
				got[i] = fmt.Sprint(m.rdb.LRange(ctx, ns+suffix, 0, -1).Val())
			}
		}
		if got[0] != got[1] {
			t.Fatalf("%s: plain %.300s\ncached %.300s", suffix, got[0], got[1])
		}
	}
	pk, ck := m.plain.mode.(bloomMode).keys, m.cached.mode.(bloomMode).keys
	s := m.plain.mode.(bloomMode).shape
	g := s.granule(unixMs(m.plain.opts.Now()))
	for old := g - s.lookback; old <= g; old++ {
		for b := range s.blocks {
			a, c := m.rdb.Get(ctx, pk.slice(old, b)).Val(), m.rdb.Get(ctx, ck.slice(old, b)).Val()
			if a != c {
				t.Fatalf("slice %d block %d differs (%d and %d bytes)", old, b, len(a), len(c))
			}
		}
	}
}

// TestFilter_CacheAnswersAsRedis drives a plain filter and a cached one
// through the same steps over ten granules of a fake clock, with Prepare
// called at random (so the cached one sometimes owns the current slice,
// sometimes not yet, sometimes holds the slice just ended before it
// seals), batches mixing new links, links of every age, repeats and
// replayed pages, and slices small enough that false positives happen.
// Every answer, counter, queue and slice must be the same.
//
// The cached filter has room for the whole window, or for the current
// slice and two sealed ones (the others checked in Redis); slices are one
// block, or split in blocks of one line, or laid out small (blocks
// made on first write).
func TestFilter_CacheAnswersAsRedis(t *testing.T) {
	for _, tt := range []struct {
		name   string
		slices int64
		edit   func(*Options)
	}{
		{"whole window", 0, nil},
		{"three slices", 3, nil},
		{"split", 0, func(o *Options) { o.MaxBlockBits = lineBits }},
		{"split, three slices", 3, func(o *Options) { o.MaxBlockBits = lineBits }},
		{"small blocks", 0, func(o *Options) { smallLayout(o, true) }},
	} {
		t.Run(tt.name, func(t *testing.T) { testCacheAnswersAsRedis(t, tt.slices, tt.edit) })
	}
}

func testCacheAnswersAsRedis(t *testing.T, slices int64, edit func(*Options)) {
	onBackends(t, func(t *testing.T, be backend) {
		clock := &fakeClock{}
		start := testHour().Add(time.Minute)
		clock.Set(start)
		m := newMirrorSlices(t, be, slices, func(o *Options) {
			o.Window, o.Granularity, o.Capacity, o.ErrorRate, o.Now = time.Hour, 10*time.Minute, 400, 0.05, clock.Now
			if edit != nil {
				edit(o)
			}
		})
		rng := rand.New(rand.NewPCG(1, 2))
		var seen []canon.Fingerprint
		ctx := context.Background()
		for step := range 240 {
			clock.Set(start.Add(time.Duration(step) * 2500 * time.Millisecond * 12)) // 30s a step, 20 per granule
			if step%20 == 1 {
				clock.Set(clock.Now().Add(-25 * time.Second)) // 5s into the granule: the last one not sealed yet
			}
			if rng.IntN(3) == 0 {
				if err := m.cached.Prepare(ctx); err != nil {
					t.Fatal(err)
				}
			}
			fps := mixedBatch(rng, step, seen)
			seen = append(seen, fps...)
			name := fmt.Sprintf("step %d (%v in)", step, clock.Now().Sub(start))
			member := "page" + strconv.Itoa(step)
			if step > 0 && rng.IntN(10) == 0 {
				member = "page" + strconv.Itoa(rng.IntN(step)) // a replay: changes nothing
			}
			m.admit(t, name, fps, member)
			m.contains(t, name, mixedBatch(rng, -step, seen))
		}
		m.sameState(t)
		info := m.cached.CacheInfo()
		t.Logf("cached filter: %+v", info)
		if info.Sealed == 0 || info.Answered == 0 || info.Blind == 0 {
			t.Fatal("the test did not exercise the cache")
		}
	})
}

// mixedBatch is up to 60 fingerprints: new ones, ones seen at any age, and
// repeats within the batch.
func mixedBatch(rng *rand.Rand, step int, seen []canon.Fingerprint) []canon.Fingerprint {
	out := testFPs("mix"+strconv.Itoa(step), 1+rng.IntN(30))
	for range rng.IntN(30) {
		if len(seen) > 0 {
			out = append(out, seen[rng.IntN(len(seen))])
		}
	}
	for range rng.IntN(3) {
		out = append(out, out[rng.IntN(len(out))])
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// TestFilter_CacheOtherWriter: a cached filter that owns the current slice
// must see what another filter wrote there. The other's write deletes the
// claim, so the owner's next call that relies on its copy fails in the
// script before writing and is retried in Redis; the owner claims again
// on a later Prepare, and its blind writes are then seen by the other.
func TestFilter_CacheOtherWriter(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		clock := &fakeClock{}
		clock.Set(testHour().Add(7 * time.Minute))
		owner, rdb, o := newVariantFilter(t, be, variant{"bloom-cached", ModeBloom, true}, func(o *Options) { o.Now = clock.Now })
		other, err := New(rdb, o) // the same slices, another copy
		if err != nil {
			t.Fatal(err)
		}
		x, y, z := testFPs("x", 5), testFPs("y", 5), testFPs("z", 5)
		mustSeen(t, other, x, true)
		mustSeen(t, owner, x, false)
		if owner.CacheInfo().Writer {
			t.Fatal("owner still trusts its copy after another filter wrote the slice")
		}
		got, err := owner.Contains(ctx, x)
		if err != nil || countTrue(got) != len(x) {
			t.Fatalf("owner contains %v, %v", got, err)
		}
		skipBackoff(owner)
		if err := owner.Prepare(ctx); err != nil {
			t.Fatal(err)
		}
		if !owner.CacheInfo().Writer {
			t.Fatal("owner did not claim the slice again")
		}
		mustSeen(t, owner, x, false) // in its copy now: answered in process
		mustSeen(t, owner, y, true)  // written blind
		mustSeen(t, other, y, false)
		mustSeen(t, other, z, true)
		mustSeen(t, owner, z, false)
	})
}

// TestFilter_CacheTwoOwners: two cached filters claiming the same slices
// in turn, each inserting what the other may have inserted, against a
// plain filter doing the same on a slice of its own: the same answers.
func TestFilter_CacheTwoOwners(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{}
	clock.Set(testHour().Add(7 * time.Minute))
	m := newMirror(t, realRedis, func(o *Options) { o.Capacity, o.ErrorRate, o.Now = 1000, 0.05, clock.Now })
	o := m.cached.Options()
	second, err := New(m.rdb, o)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var seen []canon.Fingerprint
	for step := range 60 {
		f := []*Filter{m.cached, second}[step%2]
		skipBackoff(f)
		if err := f.Prepare(ctx); err != nil {
			t.Fatal(err)
		}
		fps := mixedBatch(rng, step, seen)
		seen = append(seen, fps...)
		want, err := m.plain.SeenBatch(ctx, fps)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.SeenBatch(ctx, fps)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("step %d: plain %v, cached %v", step, want, got)
		}
	}
}

// TestSliceCache_resolve: near a granule's edge, with the server's clock
// only guessed, a call answers nothing from copies; elsewhere it takes the
// guessed granule as current.
func TestSliceCache_resolve(t *testing.T) {
	o := Options{Namespace: "ns", Window: time.Hour, Granularity: 10 * time.Minute, Capacity: 100, ErrorRate: 0.01,
		CacheBytes: 1 << 20}.withDefaults()
	c := newModeCalls(o).(bloomMode).cache
	edge := time.Now().Truncate(10 * time.Minute).UnixMilli()
	for _, tt := range []struct {
		guess  int64
		active bool
	}{
		{edge - 1, false}, {edge, false}, {edge + 999, false}, {edge + 1000, true},
		{edge - 1001, true}, {edge - 1000, false}, {edge + 5*60_000, true},
	} {
		if r := c.resolve(-1, tt.guess); r.active() != tt.active {
			t.Errorf("guess edge%+dms: active %v, want %v", tt.guess-edge, r.active(), tt.active)
		}
		if r := c.resolve(tt.guess, tt.guess); !r.active() {
			t.Errorf("known time edge%+dms: inactive", tt.guess-edge)
		}
	}
}

// TestFilter_CacheBudget: within CacheBytes, the current slice comes
// first, then the newest sealed slices; what leaves the window is dropped.
func TestFilter_CacheBudget(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{}
	start := testHour().Add(time.Minute)
	clock.Set(start)
	f, _, o := newTestFilter(t, realRedis, ModeBloom, func(o *Options) {
		o.Window, o.Granularity, o.Capacity, o.Now = time.Hour, 10*time.Minute, 10000, clock.Now
	})
	s := newBloomShape(o)
	slice := int64(s.blocks) * int64(s.blockBytes())
	for g := range 6 { // fill six granules
		clock.Set(start.Add(time.Duration(g) * o.Granularity))
		mustSeen(t, f, testFPs("budget"+strconv.Itoa(g), 100), true)
	}
	o.CacheBytes = 3*slice + slice/2
	cached, err := New(f.rdb, o)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := cached.Prepare(ctx); err != nil {
			t.Fatal(err)
		}
	}
	v := cached.mode.(bloomMode).cache.view.Load()
	g := s.granule(clock.Now().UnixMilli())
	if info := cached.CacheInfo(); !info.Writer || info.Sealed != 2 || info.Bytes != 3*slice {
		t.Fatalf("cache %+v, want the current slice and 2 sealed ones of %d bytes", info, slice)
	}
	if v.sealed[g-1] == nil || v.sealed[g-2] == nil {
		t.Fatalf("sealed copies of granules %v, want the newest (%d, %d)", keysOf(v.sealed), g-1, g-2)
	}
	clock.Set(clock.Now().Add(o.Window + o.Granularity))
	if err := cached.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	v = cached.mode.(bloomMode).cache.view.Load()
	for old := range v.sealed {
		if old <= g {
			t.Fatalf("sealed copy of granule %d kept after it left the window", old)
		}
	}
	if v.live[g] != nil || cached.CacheInfo().Bytes != slice { // the new current slice alone: the sealed ones are empty
		t.Fatalf("copies %+v after the window passed", cached.CacheInfo())
	}
}

func keysOf(m map[int64]*image) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	return out
}

// skipBackoff lets f claim a slice again at once.
func skipBackoff(f *Filter) {
	c := f.mode.(bloomMode).cache
	c.claimMu.Lock()
	c.nextClaim = time.Time{}
	c.claimMu.Unlock()
}

// TestFilter_CacheConcurrentClaims: callers of a cached filter and of a
// plain one on the same slices admit the same links at once, while the
// cached filter keeps claiming the current slice again (Prepare in a
// loop) and the plain one keeps taking the claim away: every link must be
// new for exactly one caller.
func TestFilter_CacheConcurrentClaims(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		clock := &fakeClock{}
		clock.Set(testHour().Add(7 * time.Minute))
		cached, rdb, o := newVariantFilter(t, be, variant{"bloom-cached", ModeBloom, true}, func(o *Options) {
			o.Capacity, o.Now = 2000, clock.Now
		})
		o.CacheBytes = 0
		plain, err := New(rdb, o)
		if err != nil {
			t.Fatal(err)
		}
		const callers, links = 8, 600
		fps := testFPs("claims", links)
		wins := make([][]bool, callers)
		done := make(chan struct{})
		var wg, prep sync.WaitGroup
		prep.Add(1)
		go func() {
			defer prep.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				skipBackoff(cached)
				if err := cached.Prepare(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		for c := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f := []*Filter{cached, plain}[min(c/6, 1)] // six callers of the cached filter, two of the plain one
				wins[c] = admitShuffled(t, f, fps, o.Namespace+":q", int64(c))
			}()
		}
		wg.Wait()
		close(done)
		prep.Wait()
		mustOneWinner(t, wins)
		t.Logf("%+v", cached.CacheInfo())
	})
}
