package neardup

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/luascript"
)

// MaxBatch is the most entries FindOrAdd sends in one script call; larger
// inputs are split, each part atomic on its own and run in order.
const MaxBatch = 500

// ErrEmptyID is returned by FindOrAdd for an entry without an ID.
var ErrEmptyID = errors.New("near-duplicate entry without an id")

//go:embed lua/*.lua
var luaFiles embed.FS

var findOrAddScript = redis.NewScript(luascript.Source(luaFiles, "lua/find_or_add.lua"))

// Entry is one page offered to FindOrAdd.
type Entry struct {
	// ID names the page (its URL, say); it is what a later near-duplicate
	// reports, and a page offered again under the same ID replaces its
	// entry.
	ID string
	// Hash is the page's Simhash.
	Hash uint64
}

// Result is FindOrAdd's answer for one entry.
type Result struct {
	// Of is the ID of the live entry the page duplicates, "" if it was
	// added instead.
	Of string
	// Distance is the Hamming distance to Of; -1 if the page was added.
	Distance int
}

// Duplicate reports whether the page duplicates an earlier entry.
func (r Result) Duplicate() bool { return r.Of != "" }

// Index is one job's near-duplicate index in Redis.
type Index struct {
	rdb  redis.UniversalClient
	opts Options
	keys keys
}

// New returns the index described by opts over rdb.
func New(rdb redis.UniversalClient, opts Options) (*Index, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("near-duplicate index: %w", err)
	}
	return &Index{rdb: rdb, opts: opts, keys: keys{ns: opts.Namespace}}, nil
}

// Options returns the index's options.
func (x *Index) Options() Options { return x.opts }

// FindOrAdd looks each entry up, in order, as if one call per entry: an
// entry within Distance bits of a live entry of another ID gets that ID
// (the closest; ties go to the smaller ID) and its own old entry, if it
// had one, is dropped; any other entry replaces its ID's entry, which then
// lives Window from now. So of two near-duplicates, in one batch or in
// racing calls, exactly one is added and the other finds it. Expired
// entries go with their generation's key, which expires once nothing was
// added to it for a Window.
func (x *Index) FindOrAdd(ctx context.Context, entries []Entry) ([]Result, error) {
	out := make([]Result, 0, len(entries))
	for len(entries) > 0 {
		n := min(len(entries), MaxBatch)
		res, err := x.findOrAdd(ctx, entries[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
		entries = entries[n:]
	}
	return out, nil
}

// findOrAdd runs lua/find_or_add.lua on at most MaxBatch entries. KEYS[1]
// is the generation keys' stem: the script names the generations from the
// clock (keys.go), so the key only routes the call to the job's slot.
func (x *Index) findOrAdd(ctx context.Context, entries []Entry) ([]Result, error) {
	args := make([]any, 0, 5+7*len(entries))
	args = append(args, x.opts.Window.Milliseconds(), x.nowMs(), x.opts.Distance, string(entryPrefix), string(bandPrefix))
	for _, e := range entries {
		if e.ID == "" {
			return nil, fmt.Errorf("near-duplicate index: %w", ErrEmptyID)
		}
		args = append(args, entryField(e.ID), bandField(0, e.Hash), bandField(1, e.Hash), bandField(2, e.Hash), bandField(3, e.Hash))
	}
	for _, e := range entries {
		args = append(args, e.ID, bandRecord(e.ID, e.Hash))
	}
	reply, err := findOrAddScript.Run(ctx, x.rdb, []string{x.keys.genStem()}, args...).Slice()
	if err != nil {
		return nil, fmt.Errorf("near-duplicate index: redis: %w", err)
	}
	return parseResults(reply, len(entries))
}

// parseResults reads the script's reply, (index, distance, id) per
// duplicate, into n results.
func parseResults(reply []any, n int) ([]Result, error) {
	out := make([]Result, n)
	for i := range out {
		out[i] = Result{Distance: -1}
	}
	if len(reply)%3 != 0 {
		return nil, fmt.Errorf("near-duplicate index: %d values in the reply", len(reply))
	}
	for i := 0; i < len(reply); i += 3 {
		k, ok1 := reply[i].(int64)
		d, ok2 := reply[i+1].(int64)
		of, ok3 := reply[i+2].(string)
		if !ok1 || !ok2 || !ok3 || k < 1 || k > int64(n) {
			return nil, fmt.Errorf("near-duplicate index: unexpected reply %v", reply[i:i+3])
		}
		out[k-1] = Result{Of: of, Distance: int(d)}
	}
	return out, nil
}

// nowMs is the time the scripts take: Options.Now in ms, or -1 for the
// server's clock.
func (x *Index) nowMs() int64 {
	if x.opts.Now == nil {
		return -1
	}
	return x.opts.Now().UnixMilli()
}
