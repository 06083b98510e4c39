package dedup

import (
	"context"
	"testing"
	"time"
)

// TestImage_matchesLua: the script and the filter's copies read a
// fingerprint's bits from the same spot, so they cannot drift. Fingerprints
// inserted by the script, read back into a copy, are the very bytes a copy
// gets by setting the same fingerprints in Go (one found present was not
// written, but then its bits were all set already); and for fingerprints never
// inserted (false positives included) the copy answers what the script
// answers. Split slices are checked too (several blocks).
func TestImage_matchesLua(t *testing.T) {
	for _, blockBits := range []uint64{0, 1 << 16} {
		t.Run(map[uint64]string{0: "one block", 1 << 16: "split"}[blockBits], func(t *testing.T) {
			testImageMatchesLua(t, blockBits)
		})
	}
}

func testImageMatchesLua(t *testing.T, blockBits uint64) {
	ctx := context.Background()
	defer func(n uint64) { loadChunk = n }(loadChunk)
	loadChunk = 1024 // several reads per block
	clock := &fakeClock{}
	clock.Set(time.Now())
	f, rdb, o := newTestFilter(t, realRedis, ModeBloom, func(o *Options) {
		o.Capacity, o.ErrorRate, o.MaxBlockBits, o.Now = 20000, 0.05, blockBits, clock.Now
	})
	s := newBloomShape(o)
	in := testFPs("in", 2*int(o.Capacity)) // over capacity: false positives happen
	if _, err := f.SeenBatch(ctx, in); err != nil {
		t.Fatal(err)
	}
	g := s.granule(clock.Now().UnixMilli())
	loaded := newImage(s, g, false)
	if err := loaded.load(ctx, rdb, bloomKeys(o).blocks(g, s.blocks), s.blockBytes()); err != nil {
		t.Fatal(err)
	}
	built := newImage(s, g, true)
	for _, sp := range s.spots(in) {
		built.add(sp)
	}
	for b := range s.blocks {
		if loaded.blocks[b] == nil {
			t.Fatalf("block %d of %d not loaded", b, s.blocks)
		}
		for w, v := range built.blocks[b] {
			if loaded.blocks[b][w] != v {
				t.Fatalf("block %d word %d: Redis has %016x, Go built %016x", b, w, loaded.blocks[b][w], v)
			}
		}
	}
	absent := testFPs("out", 20000)
	want, err := f.Contains(ctx, absent)
	if err != nil {
		t.Fatal(err)
	}
	positives := 0
	for i, sp := range s.spots(absent) {
		if loaded.has(sp) != want[i] {
			t.Fatalf("absent fingerprint %d: copy says %v, script %v", i, loaded.has(sp), want[i])
		}
		if want[i] {
			positives++
		}
	}
	if positives == 0 {
		t.Fatal("no false positive to compare: the slice is too empty for this test")
	}
	t.Logf("%d blocks; %d of %d absent fingerprints present in both", s.blocks, positives, len(absent))
}

// TestImage_lineWith: the line an owner writes is its copy's line with the
// fingerprint's bits set, in the byte order GETRANGE returns.
func TestImage_appendLineWith(t *testing.T) {
	o := Options{Window: time.Hour, Granularity: time.Hour, Capacity: 1000, ErrorRate: 0.01}.withDefaults()
	s := newBloomShape(o)
	im := newImage(s, 0, true)
	sps := s.spots(testFPs("line", 2))
	a, b := sps[0], sps[1]
	b.block, b.from = a.block, a.from // same line
	im.add(a)
	var want [lineBytes]byte
	for _, sp := range []spot{a, b} {
		for q := 0; q < len(sp.pairs); q += 2 {
			want[sp.pairs[q]] |= sp.pairs[q+1]
		}
	}
	if got := string(im.appendLineWith(nil, b)); got != string(want[:]) {
		t.Fatalf("line written\n%x, want the union of both fingerprints' bits\n%x", got, want)
	}
	if im.has(b) {
		t.Fatal("appendLineWith changed the copy")
	}
}
