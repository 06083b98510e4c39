package dedup

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/cluster"
)

func TestFilter_SeenBatch(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				f, _, _ := newVariantFilter(t, be, v, nil)
				fps := testFPs("a", 50)
				t.Run("first time new", func(t *testing.T) {
					got, err := f.SeenBatch(ctx, fps)
					if err != nil {
						t.Fatal(err)
					}
					if n := countTrue(got); n != len(fps) {
						t.Fatalf("%d of %d new", n, len(fps))
					}
				})
				t.Run("second time duplicate", func(t *testing.T) {
					got, err := f.SeenBatch(ctx, fps)
					if err != nil {
						t.Fatal(err)
					}
					if n := countTrue(got); n != 0 {
						t.Fatalf("%d of %d new again", n, len(fps))
					}
				})
				t.Run("repeat within a batch", func(t *testing.T) {
					x := testFPs("b", 2)
					got, err := f.SeenBatch(ctx, []canon.Fingerprint{x[0], x[1], x[0], fps[3], x[1]})
					if err != nil {
						t.Fatal(err)
					}
					want := []bool{true, true, false, false, false}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("got %v, want %v", got, want)
					}
				})
				t.Run("contains is read-only", func(t *testing.T) {
					absent := testFPs("c", 20)
					got, err := f.Contains(ctx, append(absent, fps...))
					if err != nil {
						t.Fatal(err)
					}
					if countTrue(got[:20]) != 0 || countTrue(got[20:]) != len(fps) {
						t.Fatalf("contains wrong: %v", got)
					}
					again, err := f.SeenBatch(ctx, absent)
					if err != nil || countTrue(again) != len(absent) {
						t.Fatalf("contains inserted: %v %v", again, err)
					}
				})
				t.Run("large input is chunked", func(t *testing.T) {
					big := testFPs("d", 2*MaxChunk+37)
					got, err := f.SeenBatch(ctx, append(big, big[:10]...))
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(big)+10 || countTrue(got[:len(big)]) != len(big) || countTrue(got[len(big):]) != 0 {
						t.Fatalf("got %d flags, %d new", len(got), countTrue(got))
					}
				})
			})
		}
	})
}

func TestFilter_Admit(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				f, rdb, o := newVariantFilter(t, be, v, nil)
				q1, q2, stats, once := o.Namespace+":q:1", o.Namespace+":q:2", o.Namespace+":stats", o.Namespace+":once"
				fps := testFPs("admit", 4)
				batch := func(member string, fps ...canon.Fingerprint) Batch {
					b := Batch{Stats: stats, NewField: "routed", DupField: "duplicates", OnceKey: once, OnceMember: member}
					for i, fp := range fps {
						q := []string{q1, q2, ""}[i%3]
						b.Candidates = append(b.Candidates, Candidate{FP: fp, Queue: q, Payload: fp.String(), Counter: "c:" + q})
					}
					return b
				}
				t.Run("new candidates are queued and counted", func(t *testing.T) {
					res, err := f.Admit(ctx, batch("page1", fps[0], fps[1], fps[2], fps[0]))
					if err != nil {
						t.Fatal(err)
					}
					if res.AlreadyApplied || fmt.Sprint(res.New) != "[true true true false]" {
						t.Fatalf("result %+v", res)
					}
					if fmt.Sprint(res.Started) != fmt.Sprint([]string{q1, q2}) {
						t.Errorf("started %q, want both queues: they were empty", res.Started)
					}
					assertList(t, rdb, q1, fps[0].String())
					assertList(t, rdb, q2, fps[1].String())
					assertHash(t, rdb, stats, map[string]string{"routed": "3", "duplicates": "1",
						"c:" + q1: "1", "c:" + q2: "1", "c:": "1"})
				})
				t.Run("once guard makes a replay change nothing", func(t *testing.T) {
					res, err := f.Admit(ctx, batch("page1", fps[3]))
					if err != nil {
						t.Fatal(err)
					}
					if !res.AlreadyApplied || res.New != nil {
						t.Fatalf("result %+v", res)
					}
					if got, _ := f.Contains(ctx, fps[3:]); got[0] {
						t.Fatal("replayed batch inserted its fingerprint")
					}
					assertHash(t, rdb, stats, map[string]string{"routed": "3", "duplicates": "1"})
				})
				t.Run("without stats or guard", func(t *testing.T) {
					q3 := o.Namespace + ":q:3"
					extra := testFPs("admit-q3", 1)[0]
					res, err := f.Admit(ctx, Batch{Candidates: []Candidate{{FP: fps[3], Queue: q1, Payload: "x"}, {FP: fps[1], Queue: q2},
						{FP: extra, Queue: q3, Payload: "y"}}})
					if err != nil || fmt.Sprint(res.New) != "[true false true]" {
						t.Fatalf("result %+v, %v", res, err)
					}
					assertList(t, rdb, q1, fps[0].String(), "x")
					if fmt.Sprint(res.Started) != fmt.Sprint([]string{q3}) {
						t.Errorf("started %q, want only %s: %s held a task, %s got none", res.Started, q3, q1, q2)
					}
				})
			})
		}
	})
}

// TestFilter_Concurrent: many callers admitting the same links; each link
// must be new for exactly one of them.
func TestFilter_Concurrent(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		const callers, links = 8, 300
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				f, rdb, o := newVariantFilter(t, be, v, nil)
				fps := testFPs("race", links)
				wins := make([][]bool, callers)
				var wg sync.WaitGroup
				for c := range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						wins[c] = admitShuffled(t, f, fps, o.Namespace+":q", int64(c))
					}()
				}
				wg.Wait()
				mustOneWinner(t, wins)
				if n := rdb.LLen(ctx, o.Namespace+":q").Val(); n != links {
					t.Fatalf("queue holds %d, want %d", n, links)
				}
			})
		}
	})
}

// admitShuffled admits fps in a random order, in batches of 50, and
// returns which (by index into fps) this caller won.
func admitShuffled(t *testing.T, f *Filter, fps []canon.Fingerprint, queue string, seed int64) []bool {
	order := rand.New(rand.NewPCG(uint64(seed), 1)).Perm(len(fps))
	won := make([]bool, len(fps))
	for start := 0; start < len(order); start += 50 {
		idx := order[start:min(start+50, len(order))]
		var b Batch
		for _, i := range idx {
			b.Candidates = append(b.Candidates, Candidate{FP: fps[i], Queue: queue, Payload: fmt.Sprint(i)})
		}
		res, err := f.Admit(context.Background(), b)
		if err != nil {
			t.Error(err)
			return won
		}
		for j, i := range idx {
			won[i] = res.New[j]
		}
	}
	return won
}

// TestFilter_Window moves a fake clock across the window's edges: a
// fingerprint seen inside the window is rejected; after the window plus
// one granule it is new again.
func TestFilter_Window(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		for _, m := range []Mode{ModeBloom, ModeExact} {
			t.Run(string(m), func(t *testing.T) {
				clock := &fakeClock{}
				start := testHour().Add(time.Hour + 7*time.Minute)
				clock.Set(start)
				f, _, o := newTestFilter(t, be, m, func(o *Options) { o.Now = clock.Now })
				fp := testFPs("w", 1)
				mustSeen(t, f, fp, true)
				for _, d := range []time.Duration{time.Millisecond, o.Granularity, o.Window - time.Millisecond} {
					clock.Set(start.Add(d))
					if got, _ := f.Contains(ctx, fp); !got[0] {
						t.Fatalf("forgotten after %v", d)
					}
				}
				clock.Set(start.Add(o.Window + o.Granularity))
				mustSeen(t, f, fp, true)
				mustSeen(t, f, fp, false)
			})
		}
		t.Run("set never forgets", func(t *testing.T) {
			clock := &fakeClock{}
			clock.Set(time.Now())
			f, _, _ := newTestFilter(t, be, ModeSet, func(o *Options) { o.Now = clock.Now })
			fp := testFPs("w", 1)
			mustSeen(t, f, fp, true)
			clock.Set(time.Now().Add(1000 * time.Hour))
			mustSeen(t, f, fp, false)
		})
	})
}

func mustSeen(t *testing.T, f *Filter, fps []canon.Fingerprint, wantNew bool) {
	t.Helper()
	got, err := f.SeenBatch(context.Background(), fps)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if g != wantNew {
			t.Fatalf("fingerprint %d: new = %v, want %v", i, g, wantNew)
		}
	}
}

func TestOptions_Validate(t *testing.T) {
	good := Options{Namespace: "ns", Window: 2 * time.Hour, Granularity: time.Hour, Capacity: 10, ErrorRate: 0.01}
	tests := []struct {
		field string
		edit  func(*Options)
	}{
		{"Mode", func(o *Options) { o.Mode = "lru" }},
		{"Namespace", func(o *Options) { o.Namespace = "" }},
		{"Window", func(o *Options) { o.Window = 0 }},
		{"Window", func(o *Options) { o.Window = 90 * time.Minute }},
		{"Granularity", func(o *Options) { o.Granularity = 0 }},
		{"Capacity", func(o *Options) { o.Capacity = 0 }},
		{"ErrorRate", func(o *Options) { o.ErrorRate = 1 }},
		{"MaxBlockBits", func(o *Options) { o.MaxBlockBits = 1<<32 + 1 }},
		// The hard bounds: no input may make a filter name millions of keys.
		{"Capacity", func(o *Options) { o.Capacity = 1e15 }},
		{"Capacity", func(o *Options) { o.Capacity = MaxCapacity + 1 }},
		{"Capacity", func(o *Options) { o.Capacity, o.MaxBlockBits = 10_000_000, 1024 }},
		{"Granularity", func(o *Options) { o.Window, o.Granularity = 168*time.Hour, time.Second }},
		{"ErrorRate", func(o *Options) { o.ErrorRate = MinErrorRate / 2 }},
		{"Capacity", func(o *Options) { o.Mode, o.Capacity = ModeExact, 0 }},
		{"Granularity", func(o *Options) { o.Mode, o.Granularity = ModeExact, 0 }},
		{"Capacity", func(o *Options) { o.Mode, o.Capacity = ModeSet, -1 }},
	}
	if err := good.Validate(); err != nil {
		t.Fatalf("good options: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			o := good
			tt.edit(&o)
			err := o.Validate()
			var fe *cluster.FieldError
			if !errors.Is(err, ErrInvalidOptions) || !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tt.field)
			}
		})
	}
	t.Run("set mode needs no window", func(t *testing.T) {
		if err := (Options{Mode: ModeSet, Namespace: "ns"}).Validate(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the largest valid capacity", func(t *testing.T) {
		o := good
		o.Window, o.Granularity, o.Capacity, o.ErrorRate = 168*time.Hour, 24*time.Hour, MaxCapacity, 0.001
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBloomMode_KeysBounded: near the bounds, one call names L+4 keys
// (the server's clock guessed) per distinct block of its fingerprints, and
// Prepare every block of 4 granules, all within MaxSliceKeys, and a writer
// key per granule.
func TestBloomMode_KeysBounded(t *testing.T) {
	o := Options{Namespace: "ns", Window: 168 * time.Hour, Granularity: 24 * time.Hour,
		Capacity: 2_000_000, ErrorRate: 0.001, MaxBlockBits: 8192}.withDefaults()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	m := bloomMode{keys: bloomKeys(o), shape: newBloomShape(o)}
	if m.shape.blocks < 4000 {
		t.Fatalf("only %d blocks: not near the bound", m.shape.blocks)
	}
	guess := time.Now().UnixMilli()
	for _, n := range []int{1, 3, MaxChunk} {
		fps := testFPs("k", n)
		blocks := map[int]bool{}
		for _, fp := range fps {
			p, _ := m.shape.locate(nil, fp)
			blocks[p.block] = true
		}
		b := &batch{fps: fps, spots: m.shape.spots(fps), write: true}
		if got := len(m.plan(b, -1, guess).call.modeKeys); got != 11*(len(blocks)+1) || got > MaxSliceKeys+11 {
			t.Fatalf("a check of %d in %d blocks names %d keys", n, len(blocks), got)
		}
	}
	if n := len(m.preparePlan(-1, guess, true, false).call.modeKeys); n != 4*(m.shape.blocks+1) || n > MaxSliceKeys+4 {
		t.Fatalf("Prepare names %d keys for %d blocks", n, m.shape.blocks)
	}
}

// TestFilter_layoutChange: a job resubmitted with another capacity gets
// slices of its own; the old ones, laid out for the old capacity, are not
// read with the new layout (which would take seen URLs for new).
func TestFilter_layoutChange(t *testing.T) {
	rdb, ns := testenvRedis(t)
	opts := Options{Namespace: ns, Window: time.Hour, Granularity: time.Hour, Capacity: 1000, ErrorRate: 0.01}
	a, err := New(rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Capacity = 100000
	b, err := New(rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ka, kb := a.mode.(bloomMode).keys.slice(1, 0), b.mode.(bloomMode).keys.slice(1, 0); ka == kb {
		t.Fatalf("filters of capacity 1000 and 100000 share slice key %s", ka)
	}
	same, err := New(rdb, Options{Namespace: opts.Namespace, Window: time.Hour, Granularity: time.Hour, Capacity: 100000, ErrorRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if kb, ks := b.mode.(bloomMode).keys.slice(1, 0), same.mode.(bloomMode).keys.slice(1, 0); kb != ks {
		t.Errorf("two filters of one layout name their slices differently: %s, %s", kb, ks)
	}
}

// mustOneWinner fails unless each link was new for exactly one of the
// callers that admitted it concurrently (wins[caller][link]).
func mustOneWinner(t *testing.T, wins [][]bool) {
	t.Helper()
	for i := range wins[0] {
		n := 0
		for c := range wins {
			if wins[c][i] {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("link %d was new for %d callers", i, n)
		}
	}
}
