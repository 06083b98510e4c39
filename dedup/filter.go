package dedup

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/canon"
)

// MaxChunk is the most fingerprints SeenBatch and Contains send in one
// script call; larger inputs are split (each chunk is atomic on its own).
const MaxChunk = 1000

// Filter is the dupefilter of one job: a check-and-insert of fingerprints,
// atomic per call, in one of three modes (see Mode).
type Filter struct {
	rdb     redis.UniversalClient
	opts    Options
	mode    modeCalls
	scripts scripts
	skew    atomic.Int64 // server clock minus local clock, ms (Now == nil)
}

// modeCalls lays out a mode's script calls.
type modeCalls interface {
	// plan lays out a check of b at time nowMs (< 0: the server's clock,
	// guessed locally as guess).
	plan(b *batch, nowMs, guess int64) plan
}

// batch is the fingerprints of one script call.
type batch struct {
	fps   []canon.Fingerprint
	spots []spot // where they live, in bloom mode
	write bool   // check and insert; false: only check
}

// New returns a filter over rdb. It validates opts and, when opts.Now is
// nil, reads the Redis clock once so that it can name the right slices.
func New(rdb redis.UniversalClient, opts Options) (*Filter, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	f := &Filter{rdb: rdb, opts: opts, mode: newModeCalls(opts), scripts: modeScripts[opts.Mode]}
	if opts.Now == nil && opts.Mode == ModeBloom {
		if err := f.syncClock(context.Background()); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func newModeCalls(o Options) modeCalls {
	k := keys{ns: o.Namespace}
	switch o.Mode {
	case ModeExact:
		return exactMode{keys: k, window: o.Window.Milliseconds()}
	case ModeSet:
		return setMode{keys: k}
	}
	m := bloomMode{keys: bloomKeys(o), shape: newBloomShape(o)}
	if o.CacheBytes > 0 {
		return newSliceCache(m, o.CacheBytes).mode
	}
	return m
}

// Options returns the filter's options with defaults filled in.
func (f *Filter) Options() Options { return f.opts }

// SeenBatch checks and inserts fps, reporting for each whether it was new.
// A repeat within fps is a duplicate of its first occurrence. Inputs above
// MaxChunk are split into several atomic calls.
func (f *Filter) SeenBatch(ctx context.Context, fps []canon.Fingerprint) ([]bool, error) {
	return f.chunked(ctx, "dedup seen", f.scripts.seen, fps, true)
}

// Contains reports for each fingerprint whether the filter holds it,
// without inserting anything.
func (f *Filter) Contains(ctx context.Context, fps []canon.Fingerprint) ([]bool, error) {
	return f.chunked(ctx, "dedup contains", f.scripts.contains, fps, false)
}

func (f *Filter) chunked(ctx context.Context, op string, s *redis.Script, fps []canon.Fingerprint, write bool) ([]bool, error) {
	out := make([]bool, 0, len(fps))
	for len(fps) > 0 {
		n := min(len(fps), MaxChunk)
		b := f.batch(fps[:n], write)
		rep, p, err := f.check(ctx, s, b, nil, parseSeen)
		if err != nil {
			return nil, redisErr(op, err)
		}
		out = p.merge(out, n, rep.flags, !write)
		fps = fps[n:]
	}
	return out, nil
}

// batch returns the batch of fps, located in bloom mode.
func (f *Filter) batch(fps []canon.Fingerprint, write bool) *batch {
	b := &batch{fps: fps, write: write}
	if m, ok := f.mode.(bloomMode); ok {
		b.spots = m.shape.spots(fps)
	}
	return b
}

// reply is a check's answer: the flags of the fingerprints passed, the
// granule written (bloom) and, for Admit, whether the once-guard had been
// recorded before.
type reply struct {
	flags   string
	granule int64
	applied bool
	started string // Admit: a flag per queue key, 1 where it was empty
}

// check runs script s on b with the tail's keys and arguments, parsed by
// parse. A check and insert with a cache holds b's lines (lineLocks) until
// the writes Redis confirmed are in the filter's copies.
func (f *Filter) check(ctx context.Context, s *redis.Script, b *batch, tail func(plan) ([]string, []any),
	parse func(any, int) (reply, error)) (reply, plan, error) {
	m, _ := f.mode.(bloomMode)
	if b.write && m.cache != nil {
		lines := batchLines(b.spots)
		if err := m.cache.locks.lock(ctx, lines); err != nil {
			return reply{}, plan{}, err
		}
		defer m.cache.locks.unlock(lines)
	}
	res, p, err := f.run(ctx, s, func(nowMs, guess int64) plan {
		p := f.mode.plan(b, nowMs, guess)
		if tail != nil {
			p.call.tailKeys, p.call.tailArgs = tail(p)
		}
		return p
	})
	if err != nil {
		return reply{}, p, err
	}
	rep, err := parse(res, p.call.n)
	if err == nil && b.write && !rep.applied {
		m.cache.confirm(rep.granule, b.spots, p, rep.flags)
	}
	return rep, p, err
}

// parseSeen reads the reply of SeenBatch and Contains: n flags and the
// granule.
func parseSeen(res any, n int) (reply, error) {
	arr, ok := res.([]any)
	if !ok || len(arr) != 2 {
		return reply{}, fmt.Errorf("unexpected reply %v", res)
	}
	s, _ := arr[0].(string)
	g, _ := arr[1].(int64)
	if len(s) != n {
		return reply{}, fmt.Errorf("%d flags for %d fingerprints", len(s), n)
	}
	return reply{flags: s, granule: g}, nil
}

// Prepare creates the current and the next granule's bloom keys at full
// size ahead of time, since allocating a large key blocks Redis for a
// moment; with CreateOnWrite it creates nothing ahead. With a cache
// (Options.CacheBytes), it also claims and copies the current slice, drops
// the copies that left the window and copies the slices sealed since, a
// bounded share per call. Call it once per granule or more often (a
// master calls it every tick); other modes do nothing.
func (f *Filter) Prepare(ctx context.Context) error {
	b, ok := f.mode.(bloomMode)
	switch {
	case !ok || f.opts.CreateOnWrite && b.cache == nil:
		return nil
	case b.cache != nil:
		return b.cache.prepare(ctx, f)
	}
	_, _, err := f.run(ctx, f.scripts.prepare, func(nowMs, guess int64) plan {
		return b.preparePlan(nowMs, guess, true, false)
	})
	return redisErr("dedup prepare", err)
}

// maxAttempts bounds the script runs of one call: a clock out of the
// granules guessed and a lost claim are each retried once.
const maxAttempts = 3

// run calls script s with the plan build lays out. If the server's clock
// turned out to be outside the granules guessed, it reads the clock again
// and retries once; if a copy the plan relied on as owned was written by
// another filter, it stops relying on it and retries. Script errors come
// back translated (ErrClockSkew).
func (f *Filter) run(ctx context.Context, s *redis.Script, build func(nowMs, guess int64) plan) (any, plan, error) {
	synced := false
	for attempt := 1; ; attempt++ {
		p := build(f.now())
		res, err := s.Run(ctx, f.rdb, p.call.keys(), p.call.args()...).Result()
		err = codes.Translate(err)
		switch {
		case attempt == maxAttempts:
		case errors.Is(err, errNotOwner):
			f.mode.(bloomMode).cache.disown(p.owned)
			continue
		case errors.Is(err, ErrClockSkew) && f.opts.Now == nil && !synced:
			if err := f.syncClock(ctx); err != nil {
				return nil, p, err
			}
			synced = true
			continue
		}
		return res, p, err
	}
}

// now returns the time to pass to a script: opts.Now in ms, or -1 (the
// script reads the server clock) with the local guess of that clock.
func (f *Filter) now() (nowMs, guess int64) {
	if f.opts.Now != nil {
		t := unixMs(f.opts.Now())
		return t, t
	}
	return -1, unixMs(time.Now()) + f.skew.Load()
}

func (f *Filter) syncClock(ctx context.Context) error {
	before := time.Now()
	server, err := f.rdb.Time(ctx).Result()
	if err != nil {
		return fmt.Errorf("dedup clock: redis: %w", err)
	}
	local := before.Add(time.Since(before) / 2)
	f.skew.Store(server.Sub(local).Milliseconds())
	return nil
}

func appendFlags(dst []bool, s string) []bool {
	for i := 0; i < len(s); i++ {
		dst = append(dst, s[i] == '1')
	}
	return dst
}
