package dedup

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
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

// modeCalls builds a mode's script keys and arguments for a batch at time
// nowMs (< 0: the server's clock, guessed locally as guess).
type modeCalls interface {
	call(fps []Fingerprint, nowMs, guess int64) scriptCall
}

// New returns a filter over rdb. It validates opts and, when opts.Now is
// nil, reads the Redis clock once so that it can name the right slices.
func New(rdb redis.UniversalClient, opts Options) (*Filter, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	f := &Filter{rdb: rdb, opts: opts, mode: newModeCalls(opts), scripts: loadScripts(opts.Mode)}
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
	default:
		return bloomMode{keys: k, shape: newBloomShape(o)}
	}
}

// Options returns the filter's options with defaults filled in.
func (f *Filter) Options() Options { return f.opts }

// SeenBatch checks and inserts fps, reporting for each whether it was new.
// A repeat within fps is a duplicate of its first occurrence. Inputs above
// MaxChunk are split into several atomic calls.
func (f *Filter) SeenBatch(ctx context.Context, fps []Fingerprint) ([]bool, error) {
	return f.chunked(ctx, "dedup seen", f.scripts.seen, fps)
}

// Contains reports for each fingerprint whether the filter holds it,
// without inserting anything.
func (f *Filter) Contains(ctx context.Context, fps []Fingerprint) ([]bool, error) {
	return f.chunked(ctx, "dedup contains", f.scripts.contains, fps)
}

func (f *Filter) chunked(ctx context.Context, op string, s *redis.Script, fps []Fingerprint) ([]bool, error) {
	out := make([]bool, 0, len(fps))
	for len(fps) > 0 {
		n := min(len(fps), MaxChunk)
		res, err := f.run(ctx, s, fps[:n], nil, nil)
		if err != nil {
			return nil, redisErr(op, err)
		}
		str, _ := res.(string)
		out = appendFlags(out, str)
		fps = fps[n:]
	}
	return out, nil
}

// Prepare creates the current and the next granule's bloom keys at full
// size ahead of time, since allocating a large key blocks Redis for a
// moment. Call it once per granule or more often; other modes do nothing.
func (f *Filter) Prepare(ctx context.Context) error {
	if f.opts.Mode != ModeBloom {
		return nil
	}
	_, err := f.run(ctx, f.scripts.prepare, nil, nil, nil)
	return redisErr("dedup prepare", err)
}

// Sweep removes every expired entry of an exact-mode filter and returns how
// many. Bloom slices expire on their own and set mode never expires, so
// there it returns 0. Check-and-insert already sweeps a little per call;
// Sweep is for a periodic caller.
func (f *Filter) Sweep(ctx context.Context) (int64, error) {
	res, err := f.run(ctx, f.scripts.sweep, nil, nil, nil)
	if err != nil {
		return 0, redisErr("dedup sweep", err)
	}
	n, _ := res.(int64)
	return n, nil
}

// run calls script s once; if the server's clock turned out to be outside
// the granules guessed, it reads the clock again and retries once.
func (f *Filter) run(ctx context.Context, s *redis.Script, fps []Fingerprint, tailKeys []string, tailArgs []any) (any, error) {
	for attempt := 0; ; attempt++ {
		nowMs, guess := f.now()
		c := f.mode.call(fps, nowMs, guess)
		c.tailKeys, c.tailArgs = tailKeys, tailArgs
		res, err := s.Run(ctx, f.rdb, c.keys(), c.args()...).Result()
		if !isClockErr(err) || attempt > 0 || f.opts.Now != nil {
			return res, err
		}
		if err := f.syncClock(ctx); err != nil {
			return nil, err
		}
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
