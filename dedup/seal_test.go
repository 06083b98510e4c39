package dedup

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// TestFilter_SealedSlicesNeverChange lets real time pass over granules of
// one second (so the seal margin is one granule) while three filters
// write without pause: one whose guess of the server's clock is right, one
// whose guess runs 400ms late and one 400ms early (masters whose clocks
// disagree). A cached filter whose guess runs 1.5s early, more than the
// margin, calls Prepare every 50ms. Whenever it has copied a sealed slice,
// the copy must be the very bytes Redis holds, then and at every later
// look while the slice lives: no write lands in a slice after it is
// sealed, because sealing goes by the server's clock, the one the scripts
// write by, never by a guess. As a control, a copy of the current slice
// taken mid-granule must turn out different.
func TestFilter_SealedSlicesNeverChange(t *testing.T) {
	ctx := context.Background()
	edit := func(o *Options) {
		o.Window, o.Granularity, o.Capacity, o.ErrorRate = 3*time.Second, time.Second, 20000, 0.01
	}
	cached, rdb, o := newTestFilter(t, realRedis, ModeBloom, func(o *Options) { edit(o); o.CacheBytes = 1 << 20 })
	o.CacheBytes = 0
	var writers []*Filter
	for _, skew := range []time.Duration{0, -400 * time.Millisecond, 400 * time.Millisecond} {
		f, err := New(rdb, o)
		if err != nil {
			t.Fatal(err)
		}
		f.skew.Add(skew.Milliseconds())
		writers = append(writers, f)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w, f := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := f.SeenBatch(ctx, testFPs("w"+strconv.Itoa(w)+"-"+strconv.Itoa(i), 20)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	compared, control := watchSealed(t, cached, rdb, o, 5*time.Second)
	close(stop)
	wg.Wait()
	if compared < 3 {
		t.Fatalf("only %d sealed copies compared", compared)
	}
	if !control {
		t.Fatal("a copy of the current slice never differed from Redis: the comparison cannot see late writes")
	}
	t.Logf("%d comparisons of sealed copies with Redis, all equal; %+v", compared, cached.CacheInfo())
}

// watchSealed calls Prepare every 50ms for d, with f's guess of the
// server's clock 1.5s early, and compares every sealed copy with the slice
// in Redis, reporting how many it compared and whether a mid-granule copy
// of a current slice later differed.
func watchSealed(t *testing.T, f *Filter, rdb *redis.Client, o Options, d time.Duration) (compared int, control bool) {
	ctx := context.Background()
	s := newBloomShape(o)
	k := bloomKeys(o)
	var early *image
	skew := f.skew.Load() + 1500
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		f.skew.Store(skew) // a call that finds it wrong reads the clock again
		if err := f.Prepare(ctx); err != nil {
			t.Fatal(err)
		}
		for g, im := range f.mode.(bloomMode).cache.view.Load().sealed {
			if im.blocks[0] == nil {
				continue // written by nobody, or expired
			}
			same, ok := sameAsRedis(t, rdb, k.slice(g, 0), im)
			if ok && !same {
				t.Fatalf("sealed copy of granule %d differs from Redis", g)
			}
			if ok {
				compared++
			}
		}
		now := testenv.ServerTime(t, rdb).UnixMilli()
		g := s.granule(now)
		switch {
		case early == nil && now-g*s.gran > 300 && now-g*s.gran < 600:
			early = newImage(s, g, false)
			if err := early.load(ctx, rdb, k.blocks(g, s.blocks), s.blockBytes()); err != nil {
				t.Fatal(err)
			}
		case early != nil && !control && g > early.granule:
			same, ok := sameAsRedis(t, rdb, k.slice(early.granule, 0), early)
			control = ok && !same
		}
	}
	return compared, control
}

// sameAsRedis reports whether im's first block holds the bytes of key,
// bit for bit (a Redis string may be shorter than the block, or not a
// whole number of words long: the rest reads as zeros); ok is false if
// the key expired.
func sameAsRedis(t *testing.T, rdb *redis.Client, key string, im *image) (same, ok bool) {
	t.Helper()
	raw, err := rdb.Get(context.Background(), key).Bytes()
	if errors.Is(err, redis.Nil) {
		return false, false
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 8*len(im.blocks[0]) {
		t.Logf("%s holds %d bytes; its copy %d", key, len(raw), 8*len(im.blocks[0]))
	}
	words := max(len(im.blocks[0]), (len(raw)+7)/8)
	o := newImage(bloomShape{blocks: 1}, im.granule, false)
	o.merge(0, 0, string(raw), uint64(8*words))
	for w := range words {
		if wordAt(o.blocks[0], w) != wordAt(im.blocks[0], w) {
			return false, true
		}
	}
	return true, true
}

// wordAt is words[w], or 0 past its end.
func wordAt(words []uint64, w int) uint64 {
	if w < len(words) {
		return words[w]
	}
	return 0
}

// TestFilter_ClockStepsBack: a clock that steps back into a sealed
// granule (NTP, a failover to a replica with another clock) makes it
// writable again. The filter then stops trusting its copy (the call checks
// that granule in Redis, and Prepare drops the copy), and after the clock
// passes the margin again it reads the slice anew, writes included.
func TestFilter_ClockStepsBack(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{}
	start := testHour().Add(time.Hour)
	clock.Set(start.Add(-time.Minute)) // granule s: the hour before start
	m := newMirror(t, realRedis, func(o *Options) { o.Window, o.Granularity, o.Now = 3*time.Hour, time.Hour, clock.Now })
	m.admit(t, "in s", testFPs("s", 10), "p1")
	later := start.Add(SealMargin + time.Second)
	clock.Set(later)
	if err := m.cached.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	if info := m.cached.CacheInfo(); info.Sealed == 0 {
		t.Fatalf("slice s not sealed: %+v", info)
	}
	clock.Set(start.Add(-time.Second)) // back into s
	x := testFPs("x", 5)
	m.admit(t, "stepped back, before any Prepare", x, "p2") // both write x into s
	if err := m.cached.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	m.admit(t, "stepped back, after Prepare", append(testFPs("y", 5), x...), "p3")
	clock.Set(later)
	if err := m.cached.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	m.contains(t, "sealed again", append(testFPs("y", 5), x...))
	m.admit(t, "sealed again", append(testFPs("z", 5), x...), "p4")
	if got, _ := m.cached.Contains(ctx, x); countTrue(got) != len(x) {
		t.Fatalf("written while the clock was back, lost after: %v", got)
	}
	m.sameState(t)
}
