package politeness

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// hostAsk is one host's part of a round as a test sends it.
type hostAsk struct {
	host             string
	keep, want, book int
	intervalMS       float64
	burst, cap       int
	ok, thr          int
	pauseMS          int64
}

// hostReply is one host's part of a round's reply, booked times made
// relative to the server's now.
type hostReply struct {
	held, share int
	contended   bool
	booked      []float64 // ms after the server's now
	waitMS      int64
	pausedMS    int64
	factor      float64
}

// runRound calls round.lua as holder on a moved clock, with the defaults'
// backoff (which never cuts here: at least 1000 throttled answers), a
// lease of 5s and a horizon of 1s.
func runRound(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys, holder string, asks ...hostAsk) (lapsed bool, out []hostReply) {
	t.Helper()
	k := keys.Politeness(0)
	args := []any{holder, 5000, 60000, 0, 0, 0.5, 0.01, 0.1, 1000, 10000, 1000, 0.5, 1000}
	for _, a := range asks {
		args = append(args, a.host, a.keep, a.want, a.book, 0, a.intervalMS, a.burst, a.cap, a.ok, a.thr, a.pauseMS, 0)
	}
	res, err := roundScript.Run(context.Background(), rdb, []string{k.Hosts(), k.Live()}, args...).Slice()
	if err != nil {
		t.Fatalf("round: %v", err)
	}
	for i := range asks {
		v := res[2+i*replyFields:]
		r := hostReply{held: int(toInt64(v[0])), share: int(toInt64(v[1])), contended: toInt64(v[2]) == 1,
			waitMS: toInt64(v[6]), pausedMS: toInt64(v[7]), factor: float64(toInt64(v[8])) / 1e6}
		start, step := usToMS(v[3]), usToMS(v[5])
		for j := range int(toInt64(v[4])) {
			r.booked = append(r.booked, math.Max(0, start+float64(j)*step))
		}
		out = append(out, r)
	}
	return toInt64(res[1]) == 1, out
}

// bookStep is one round on a moved clock: the clock is advanced first,
// then the process books times, telling what the host answered.
type bookStep struct {
	advance time.Duration
	book    int
	pauseMS int64 // a 429's Retry-After, as Done reports it
	// The script's answer: the times booked (ms after now), how long the
	// host stays paused.
	booked   []float64
	pausedMS int64
}

// TestRound_bookingsOnAMovedClock: the GCRA books a burst at once, then
// one time an interval, the first of an ask however far ahead, the others
// within the horizon; a Retry-After pause books nothing until the clock
// passes it. The clock is moved, not waited for.
func TestRound_bookingsOnAMovedClock(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []bookStep
	}{
		{"a burst, then one an interval within the horizon", []bookStep{
			{book: 5, booked: []float64{0, 0, 1000}},
			{advance: 999 * time.Millisecond, book: 1, booked: []float64{1001}},
			{book: 2, booked: []float64{2001}}, // the first however far; no second beyond the horizon
			{advance: time.Minute, book: 5, booked: []float64{0, 0, 1000}},
		}},
		{"a Retry-After pause ends on time", []bookStep{
			{book: 1, pauseMS: 1500, pausedMS: 1500},
			{advance: 1499 * time.Millisecond, book: 1, pausedMS: 1},
			{advance: time.Millisecond, book: 1, booked: []float64{0}},
		}},
		{"a later, shorter pause does not shorten it", []bookStep{
			{pauseMS: 3000, pausedMS: 3000},
			{advance: time.Second, pauseMS: 500, book: 1, pausedMS: 2000},
			{advance: 2 * time.Second, book: 1, booked: []float64{0}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb, keys, clock := testenv.MovedRedis(t)
			for i, s := range tc.steps {
				clock.Advance(s.advance)
				thr := 0
				if s.pauseMS > 0 {
					thr = 1
				}
				_, out := runRound(t, rdb, keys, "p1", hostAsk{host: "clock.test", keep: -1, book: s.book,
					intervalMS: 1000, burst: 2, cap: 4, thr: thr, pauseMS: s.pauseMS})
				if got := out[0]; !equalMS(got.booked, s.booked) || got.pausedMS != s.pausedMS {
					t.Errorf("step %d (+%s): booked %v, paused %d ms; want %v, %d",
						i, s.advance, got.booked, got.pausedMS, s.booked, s.pausedMS)
				}
			}
			b := newBudget(t, rdb, keys, nil)
			if st, err := b.State(context.Background(), "clock.test"); err != nil || st.Paused != 0 {
				t.Errorf("State at the end = %+v, %v; want no pause", st, err)
			}
		})
	}
}

func equalMS(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 0.01 {
			return false
		}
	}
	return true
}

// TestRound_slotsOnAMovedClock: slots are shared by water-filling; a
// process holding more than its share learns it by any round that names
// the host, and gives back; the slots of a process that stops renewing
// its hold free after the lease, for every host of the shard at once,
// and the process hears its hold lapsed.
func TestRound_slotsOnAMovedClock(t *testing.T) {
	rdb, keys, clock := testenv.MovedRedis(t)
	ask := func(host string, keep, want int) hostAsk {
		return hostAsk{host: host, keep: keep, want: want, intervalMS: 1, burst: 1, cap: 8}
	}
	if _, out := runRound(t, rdb, keys, "a", ask("x.test", 0, 8), ask("y.test", 0, 2)); out[0].held != 8 || out[1].held != 2 {
		t.Fatalf("a alone: held %d and %d, want the 8 it wants of x and the 2 of y", out[0].held, out[1].held)
	}
	_, out := runRound(t, rdb, keys, "b", ask("x.test", 0, 1))
	if out[0].held != 0 || out[0].share != 1 || !out[0].contended {
		t.Fatalf("b wants 1 of a full cap: %+v, want none held, a share of 1, contended", out[0])
	}
	peek := ask("x.test", -1, 8)
	if _, out := runRound(t, rdb, keys, "a", peek); out[0].held != -1 || out[0].share != 7 {
		t.Fatalf("a peeks at x: %+v, want held -1 (untouched) and its share cut to 7", out[0])
	}
	runRound(t, rdb, keys, "a", ask("x.test", 7, 8))
	if _, out := runRound(t, rdb, keys, "b", ask("x.test", 0, 1)); out[0].held != 1 {
		t.Fatalf("b after a gave one back: held %d, want 1", out[0].held)
	}
	clock.Advance(6 * time.Second) // a's lease (5s) ran out; b renews
	if _, out := runRound(t, rdb, keys, "b", ask("y.test", 0, 8)); out[0].held != 8 {
		t.Errorf("b after a's lease ran out: held %d of y, want all 8", out[0].held)
	}
	lapsed, out := runRound(t, rdb, keys, "a", ask("x.test", 7, 8))
	if !lapsed || out[0].held != 7 || out[0].share != 7 {
		t.Errorf("a after its lease ran out: lapsed %v, %+v; want lapsed and asked anew (7 free, share 7)", lapsed, out[0])
	}
}

// TestRound_restAndSweep: a host whose budget is back at rest leaves no
// entry; one left with a slowed rate is swept once nobody used it for the
// state ttl; a process that stops leaves the live hash.
func TestRound_restAndSweep(t *testing.T) {
	rdb, keys, clock := testenv.MovedRedis(t)
	ctx := context.Background()
	k := keys.Politeness(0)
	runRound(t, rdb, keys, "a", hostAsk{host: "rest.test", keep: 0, want: 1, book: 1, intervalMS: 100, burst: 1, cap: 1})
	runRound(t, rdb, keys, "a", hostAsk{host: "rest.test", keep: 0, want: 0, intervalMS: 100, burst: 1, cap: 1})
	if n, _ := rdb.HLen(ctx, k.Hosts()).Result(); n != 1 {
		t.Fatalf("%d entries after the host was given back, want 1 (its booked rate had not caught up then)", n)
	}
	args := []any{"a", 5000, 60000, 0, 64, 0.5, 0.01, 0.1, 1000, 10000, 1000, 0.5, 1000}
	clock.Advance(2 * time.Minute) // past the state ttl of 60s
	if err := roundScript.Run(ctx, rdb, []string{k.Hosts(), k.Live()}, args...).Err(); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.HLen(ctx, k.Hosts()).Result(); n != 0 {
		t.Errorf("%d entries after a sweep past the state ttl, want 0", n)
	}
	args[3] = 1 // final
	if err := roundScript.Run(ctx, rdb, []string{k.Hosts(), k.Live()}, args...).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := rdb.HExists(ctx, k.Live(), "a").Result(); ok {
		t.Errorf("the process is still live after its final round")
	}
}

// TestServerClock: the offset trusted is the quickest round trip's, so
// slow replies (a busy machine) do not move the process's reading of the
// server's clock; a server clock set anew shows as a sample that cannot
// agree with it, and is followed.
func TestServerClock(t *testing.T) {
	base := time.Now()
	c := serverClock{base: base}
	const trueOffset = 5000.0 // server ms - local ms
	// serverAt is the server's reading at a given local instant.
	serverAt := func(local time.Time, offset float64) float64 { return millis(local.Sub(base)) + offset }
	at := base
	round := func(out, back time.Duration, offset float64) {
		sent := at
		c.observe(sent, sent.Add(out+back), serverAt(sent.Add(out), offset))
		at = at.Add(100 * time.Millisecond)
	}
	round(200*time.Microsecond, 200*time.Microsecond, trueOffset) // one quick round trip
	for range 40 {
		round(time.Millisecond, 150*time.Millisecond, trueOffset) // then replies that wait 150ms to be read
	}
	if err := math.Abs(c.offset() - trueOffset); err > 0.5 {
		t.Errorf("offset off by %.3f ms after slow replies, want within half the quickest round trip", err)
	}
	local := c.local(trueOffset + 1000)
	if d := local.Sub(base.Add(time.Second)); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("server time +1s maps to %v off its true local time", d)
	}
	round(time.Millisecond, time.Millisecond, trueOffset+3000) // the server's clock jumped 3s
	if err := math.Abs(c.offset() - (trueOffset + 3000)); err > 1 {
		t.Errorf("offset %.0f after the server's clock was set anew, want %.0f", c.offset(), trueOffset+3000)
	}
}
