package dedup

import (
	"crypto/rand"
	"encoding/hex"
	"maps"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Safety margins of the in-process copies (sliceCache).
const (
	// SealMargin is how long after its granule ends a slice is sealed: from
	// then on no script writes it, so a copy read from Redis holds it
	// exactly. A script writes only the granule of Redis's clock when it
	// starts, and Redis runs one script at a time, so the margin is for
	// clocks that step back (NTP) and for a failover to a replica whose
	// clock differs. Granules shorter than that seal one granule after they
	// end. Until sealed, the slice just ended is checked in Redis (or in
	// the filter's copy, while it is still the slice's writer).
	SealMargin = 10 * time.Second
	// clockSlack is how close to a granule's edge the filter's guess of the
	// server's clock may be before it stops answering from copies: there
	// the call could land in either granule, so it checks everything in
	// Redis. At most a quarter granule.
	clockSlack = time.Second
)

// DefaultCacheBytes is the cache a master should give each bloom job
// (Options.CacheBytes): a whole window of the job file's default capacity
// (10M URLs a day, 8 slices of 24 MiB) fits in it.
const DefaultCacheBytes int64 = 256 << 20

// sliceCache is a bloom Filter's copies of slices in process memory
// (images), so that a check does not send to Redis what the copies already
// answer. It keeps two kinds:
//
//   - sealed slices (SealMargin after their granule), read once from
//     Redis and checked here alone;
//   - the current slice, which the filter claims as its writer (the slice's
//     writer key holds the filter's id) and keeps in step with every write
//     Redis confirms. While the claim holds, nobody else has written the
//     slice, so the copy is exact: the filter checks it here and sends only
//     the lines of new fingerprints, which the script writes without
//     reading them. Any other writer deletes the writer key; the next call
//     that relies on the claim fails before writing (DEDUPOWNER), and the
//     filter checks that slice in Redis until it claims it again.
//
// A copy only gains bits as the slice does, so a fingerprint found in any
// copy of a slice inside the window is a duplicate whatever the claim.
// The script checks, before writing anything, that its clock is in the
// granule the filter took as current, that the slices taken as sealed are,
// and that the claims relied on hold; so the answers are those of a check
// of every slice in Redis.
//
// Two calls of one filter never write the same line at once (lineLocks):
// a line written without reading must include every bit set before it.
type sliceCache struct {
	mode   bloomMode // whose cache this is
	id     string    // the filter's writer id
	budget int64
	view   atomic.Pointer[cacheView]
	locks  lineLocks

	answered atomic.Int64 // fingerprints answered from copies
	blind    atomic.Int64 // lines written without reading them

	mu sync.Mutex // one Prepare at a time

	claimMu   sync.Mutex // guards what follows and images' claimedAt
	backoff   time.Duration
	nextClaim time.Time
}

// cacheView is the copies calls use, replaced whole when Prepare changes
// them.
type cacheView struct {
	sealed map[int64]*image
	live   map[int64]*image // the current slice, and the one just ended until it seals
}

// newSliceCache returns an empty cache of at most budget bytes for m.
func newSliceCache(m bloomMode, budget int64) *sliceCache {
	var id [8]byte
	_, _ = rand.Read(id[:])
	c := &sliceCache{mode: m, id: hex.EncodeToString(id[:]), budget: budget}
	c.mode.cache = c
	c.view.Store(&cacheView{sealed: map[int64]*image{}, live: map[int64]*image{}})
	return c
}

// writerID is the id the filter claims slices with ("" without a cache).
func (c *sliceCache) writerID() string {
	if c == nil {
		return ""
	}
	return c.id
}

// margin is SealMargin in milliseconds, at most one granule (0 without a
// cache).
func (c *sliceCache) margin() int64 {
	if c == nil {
		return 0
	}
	return min(SealMargin.Milliseconds(), c.mode.shape.gran)
}

// slack is clockSlack in milliseconds, at most a quarter granule.
func (c *sliceCache) slack() int64 {
	return min(clockSlack.Milliseconds(), c.mode.shape.gran/4)
}

// sealed reports whether granule s is sealed at time ms.
func (c *sliceCache) sealed(s, ms int64) bool {
	return ms >= (s+1)*c.mode.shape.gran+c.margin()
}

// resolution is what one call takes from the copies.
type resolution struct {
	ggo     int64    // the granule taken as current; -1: none, all in Redis
	res     []byte   // per granule ggo-L..ggo: 'r', 'g' or 'o' (lua/bloom.lua)
	images  []*image // the copies of slices in the window
	current *image   // the current slice's copy, when owned
	owned   []*image // the copies relied on as owned
}

func (r resolution) active() bool { return r.ggo >= 0 }

// found reports which of spots a copy holds (nil: none, without copies).
// (Splitting the lookups among processors measured slower end to end: the
// other processor is Redis's.)
func (r resolution) found(spots []spot) []bool {
	if len(r.images) == 0 {
		return nil
	}
	out := make([]bool, len(spots))
	r.lookup(spots, out)
	return out
}

// lookup sets out[i] when a copy holds spots[i]. For each fingerprint it
// first loads the word of its first bit from every copy, and a word of the
// line's other cache line, then looks further only where that bit is set:
// the copies are far apart in memory, and loads that do not wait on each
// other's answers overlap (measured 1.8x faster over 8 copies of 24 MiB
// than checking one copy after another, and 12% more with the other cache
// line).
func (r resolution) lookup(spots []spot, out []bool) {
	probe := make([]uint64, len(r.images)+1)
	for i, sp := range spots {
		w, bit := wordBit(sp.pairs[0], sp.pairs[1])
		base := int(sp.from / 8)
		var other uint64
		for j, im := range r.images {
			probe[j] = 0
			if words := im.blocks[sp.block]; words != nil {
				probe[j] = atomic.LoadUint64(&words[base+w])
				other |= atomic.LoadUint64(&words[base+w^8]) // the line's other 64 bytes: fetched now, read below
			}
		}
		probe[len(r.images)] = other
		for j, im := range r.images {
			if probe[j]&bit != 0 && im.has(sp) {
				out[i] = true
				break
			}
		}
	}
}

// resolve decides, for a call at nowMs (< 0: guess), which granule is
// current and how each slice of the window is checked. Near a granule's
// edge, when the server's clock is only guessed, everything goes to Redis.
func (c *sliceCache) resolve(nowMs, guess int64) resolution {
	if c == nil {
		return resolution{ggo: -1}
	}
	s := c.mode.shape
	t := nowMs
	if t < 0 {
		t = guess
		if into := t - s.granule(t)*s.gran; into < c.slack() || s.gran-into <= c.slack() {
			return resolution{ggo: -1}
		}
	}
	g, v := s.granule(t), c.view.Load()
	r := resolution{ggo: g, res: make([]byte, s.lookback+1)}
	for i := range r.res {
		r.res[i] = c.resolveSlice(&r, v, g-s.lookback+int64(i), t)
	}
	return r
}

// resolveSlice adds granule s's copy to r and returns how s is checked.
func (c *sliceCache) resolveSlice(r *resolution, v *cacheView, s, t int64) byte {
	if im := v.live[s]; im != nil {
		r.images = append(r.images, im)
		if !im.owned.Load() {
			return 'r'
		}
		r.owned = append(r.owned, im)
		if s == r.ggo {
			r.current = im
		}
		return 'o'
	}
	if im := v.sealed[s]; im != nil && s < r.ggo && c.sealed(s, t) {
		r.images = append(r.images, im)
		return 'g'
	}
	return 'r'
}

// count adds a call's answers from copies and lines written blind to
// CacheInfo's totals.
func (c *sliceCache) count(answered, blind int) {
	if c != nil && answered+blind > 0 {
		c.answered.Add(int64(answered))
		c.blind.Add(int64(blind))
	}
}

// confirm adds to the copy of granule g, if any, the fingerprints Redis
// reported new there.
func (c *sliceCache) confirm(g int64, spots []spot, p plan, flags string) {
	if c == nil {
		return
	}
	im := c.view.Load().live[g]
	if im == nil {
		return
	}
	for j := range len(flags) {
		if flags[j] == '1' {
			i := j
			if p.sent != nil {
				i = p.sent[j]
			}
			im.add(spots[i])
		}
	}
}

// disown marks the copies a call relied on as no longer owned, after the
// script found another writer, and backs off claiming again: from a second
// up to a minute while claims keep being lost soon after they are made,
// as when two filters write one slice.
func (c *sliceCache) disown(ims []*image) {
	if c == nil {
		return
	}
	c.claimMu.Lock()
	defer c.claimMu.Unlock()
	c.backoff = min(max(2*c.backoff, time.Second), time.Minute)
	for _, im := range ims {
		if im.owned.Swap(false) && time.Since(im.claimedAt) > time.Minute {
			c.backoff = time.Second // a claim that held a while: not a fight over the slice
		}
	}
	c.nextClaim = time.Now().Add(c.backoff)
}

// publish replaces the view with edit applied to a copy of it.
func (c *sliceCache) publish(edit func(v *cacheView)) {
	old := c.view.Load()
	v := &cacheView{sealed: maps.Clone(old.sealed), live: maps.Clone(old.live)}
	edit(v)
	c.view.Store(v)
}

// bytes is the memory the view's copies hold.
func (v *cacheView) bytes() int64 { return v.bytesFrom(math.MinInt64) }

// bytesFrom is the memory the view's copies of granules from lo on hold.
func (v *cacheView) bytesFrom(lo int64) int64 {
	var n int64
	for _, m := range []map[int64]*image{v.sealed, v.live} {
		for g, im := range m {
			if g >= lo {
				n += im.bytes
			}
		}
	}
	return n
}

// CacheInfo is what a bloom Filter keeps in process memory (see
// Options.CacheBytes).
type CacheInfo struct {
	// Bytes is the memory its copies of slices hold.
	Bytes int64
	// Sealed is the number of sealed slices it checks in process.
	Sealed int
	// Writer says it holds an exact copy of the current slice, as its
	// writer.
	Writer bool
	// Answered is the fingerprints found in the copies since the filter
	// was made, which Redis was not asked about.
	Answered int64
	// Blind is the lines the filter wrote without Redis reading them (new
	// fingerprints of the current slice while it was the writer).
	Blind int64
}

// CacheInfo reports what the filter keeps in process memory (zero without
// a cache).
func (f *Filter) CacheInfo() CacheInfo {
	b, ok := f.mode.(bloomMode)
	if !ok || b.cache == nil {
		return CacheInfo{}
	}
	v := b.cache.view.Load()
	info := CacheInfo{Bytes: v.bytes(), Sealed: len(v.sealed), Answered: b.cache.answered.Load(), Blind: b.cache.blind.Load()}
	nowMs, guess := f.now()
	if nowMs < 0 {
		nowMs = guess
	}
	if im := v.live[b.shape.granule(nowMs)]; im != nil {
		info.Writer = im.owned.Load()
	}
	return info
}
