package dedup

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestFilter_SeenBatch(t *testing.T) {
	onBackends(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		for _, m := range allModes {
			t.Run(string(m), func(t *testing.T) {
				f, _, _ := newTestFilter(t, be, m, nil)
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
					got, err := f.SeenBatch(ctx, []Fingerprint{x[0], x[1], x[0], fps[3], x[1]})
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
		for _, m := range allModes {
			t.Run(string(m), func(t *testing.T) {
				f, rdb, o := newTestFilter(t, be, m, nil)
				q1, q2, stats, once := o.Namespace+":q:1", o.Namespace+":q:2", o.Namespace+":stats", o.Namespace+":once"
				fps := testFPs("admit", 4)
				batch := func(member string, fps ...Fingerprint) Batch {
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
					res, err := f.Admit(ctx, Batch{Candidates: []Candidate{{FP: fps[3], Queue: q1, Payload: "x"}, {FP: fps[1]}}})
					if err != nil || fmt.Sprint(res.New) != "[true false]" {
						t.Fatalf("result %+v, %v", res, err)
					}
					assertList(t, rdb, q1, fps[0].String(), "x")
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
		for _, m := range allModes {
			t.Run(string(m), func(t *testing.T) {
				f, rdb, o := newTestFilter(t, be, m, nil)
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
				for i := range fps {
					n := 0
					for c := range callers {
						if wins[c][i] {
							n++
						}
					}
					if n != 1 {
						t.Fatalf("link %d was new for %d callers", i, n)
					}
				}
				if n := rdb.LLen(ctx, o.Namespace+":q").Val(); n != links {
					t.Fatalf("queue holds %d, want %d", n, links)
				}
			})
		}
	})
}

// admitShuffled admits fps in a random order, in batches of 50, and
// returns which (by index into fps) this caller won.
func admitShuffled(t *testing.T, f *Filter, fps []Fingerprint, queue string, seed int64) []bool {
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
				start := time.Now().Truncate(time.Hour).Add(time.Hour + 7*time.Minute)
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

func mustSeen(t *testing.T, f *Filter, fps []Fingerprint, wantNew bool) {
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
	}
	if err := good.Validate(); err != nil {
		t.Fatalf("good options: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			o := good
			tt.edit(&o)
			err := o.Validate()
			if !errors.Is(err, ErrInvalidOptions) || !containsStr(err.Error(), tt.field+":") {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tt.field)
			}
		})
	}
	t.Run("set mode needs no window", func(t *testing.T) {
		if err := (Options{Mode: ModeSet, Namespace: "ns"}).Validate(); err != nil {
			t.Fatal(err)
		}
	})
}
