package neardup

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"sync"
	"time"

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

// scripts are the package's protocol steps (luascript.Set).
var scripts = luascript.Set{FS: luaFiles}

var commitScript = scripts.Load("lua/commit.lua")

// maxReply is the most bytes of a log one commit call replies: a caller
// that holds little of a long log reads it over several calls.
const maxReply = 4 << 20

// maxCommitTries bounds the calls of one commit; each try after the first
// follows a reply with bytes the caller lacked.
const maxCommitTries = 1000

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

// Index is one job's near-duplicate index: the logs in Redis, shared by
// every slave, and this process's mirror of them. It is safe for
// concurrent use; calls run one at a time.
type Index struct {
	rdb  redis.UniversalClient
	opts Options
	keys keys

	mu       sync.Mutex
	mirror   *mirror
	maxReply int // bytes of a log one reply carries at most
	// serverMs is the server's clock at the last reply, read at local
	// (monotonic) time at: the time a batch is decided at.
	serverMs int64
	at       time.Time
}

// New returns the index described by opts over rdb.
func New(rdb redis.UniversalClient, opts Options) (*Index, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("near-duplicate index: %w", err)
	}
	return &Index{rdb: rdb, opts: opts, keys: keys{ns: opts.Namespace}, mirror: newMirror(), maxReply: maxReply}, nil
}

// Held returns how many entries this process's mirror of the index holds
// (replaced and dropped ones too, until the next window) and about how
// many bytes of memory it takes.
func (x *Index) Held() (entries int, bytes int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.mirror.entries), x.mirror.bytes()
}

// FindOrAdd looks each entry up, in order, as if one call per entry: an
// entry within Distance bits of a live entry of another ID gets that ID
// (the closest; ties go to the smaller ID) and its own old entry, if it
// had one, is dropped; any other entry replaces its ID's entry, which then
// lives Window from now. So of two near-duplicates, in one batch or in
// racing calls of any processes, exactly one is added and the other finds
// it. Expired entries go with their generation's log, which expires once
// nothing was appended to it for a Window.
func (x *Index) FindOrAdd(ctx context.Context, entries []Entry) ([]Result, error) {
	for _, e := range entries {
		if e.ID == "" {
			return nil, fmt.Errorf("near-duplicate index: %w", ErrEmptyID)
		}
		if len(e.ID) > maxIDBytes {
			return nil, fmt.Errorf("near-duplicate index: id of %d bytes, more than %d", len(e.ID), maxIDBytes)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]Result, 0, len(entries))
	for len(entries) > 0 {
		n := min(len(entries), MaxBatch)
		res, err := x.commit(ctx, entries[:n])
		if err != nil {
			return nil, fmt.Errorf("near-duplicate index: %w", err)
		}
		out = append(out, res...)
		entries = entries[n:]
	}
	return out, nil
}

// commit decides entries against the mirror and appends their records,
// bringing the mirror up to date and deciding again until the append
// finds the mirror whole. A mirror that has never been synced is synced
// first, without deciding anything.
func (x *Index) commit(ctx context.Context, entries []Entry) ([]Result, error) {
	window := x.opts.Window.Milliseconds()
	for range maxCommitTries {
		var res []Result
		var records []byte
		if x.mirror.gen >= 0 {
			res, records = decide(x.mirror, entries, x.nowMs(), window, x.opts.Distance)
		}
		done, err := x.call(ctx, records)
		if err != nil {
			return nil, err
		}
		if done { // only a mirror that was synced, and so decided, is whole
			// The records follow the bytes the mirror held: replay them.
			if err := x.mirror.sync(x.mirror.gen, x.heldBytes(), [2][]byte{nil, records}); err != nil {
				x.mirror.forget()
				return nil, err
			}
			return res, nil
		}
	}
	return nil, fmt.Errorf("no commit after %d tries: the logs keep growing faster than they are read", maxCommitTries)
}

// heldBytes is how many bytes of each log the mirror holds.
func (x *Index) heldBytes() [2]int64 {
	return [2]int64{int64(len(x.mirror.logs[0].buf)), int64(len(x.mirror.logs[1].buf))}
}

// call runs lua/commit.lua: it appends records and reports true if the
// mirror was whole, else syncs the mirror with the reply and reports
// false. KEYS[1] is the logs' stem: the script names the generations from
// the clock (keys.go), so the key only routes the call to the job's slot.
func (x *Index) call(ctx context.Context, records []byte) (bool, error) {
	held := x.heldBytes()
	args := []any{x.timeArg(), x.opts.Window.Milliseconds(), x.mirror.gen, held[0], held[1], records, x.maxReply,
		x.mirror.head(0), x.mirror.head(1)}
	reply, err := commitScript.Run(ctx, x.rdb, []string{x.keys.logStem()}, args...).Slice()
	if err != nil {
		return false, fmt.Errorf("redis: %w", err)
	}
	done, gen, now, err := parseHead(reply)
	if err != nil {
		return false, err
	}
	x.serverMs, x.at = now, time.Now()
	if done {
		return true, nil
	}
	from, tails, err := parseTails(reply)
	if err != nil {
		return false, err
	}
	if err := x.mirror.sync(gen, from, tails); err != nil {
		if held == [2]int64{} {
			return false, err // read whole: the log itself is corrupt
		}
		// The logs are not what the mirror held, though as long: a Redis
		// failover lost their last appends and others wrote since. Read
		// them whole on the next try.
		x.mirror.forget()
	}
	return false, nil
}

// parseHead reads the status, generation and time of a commit reply.
func parseHead(reply []any) (done bool, gen, now int64, err error) {
	if len(reply) != 3 && len(reply) != 7 {
		return false, 0, 0, fmt.Errorf("unexpected reply of %d values", len(reply))
	}
	status, ok1 := reply[0].(int64)
	gen, ok2 := reply[1].(int64)
	now, ok3 := reply[2].(int64)
	if !ok1 || !ok2 || !ok3 {
		return false, 0, 0, fmt.Errorf("unexpected reply %v", reply[:3])
	}
	return status == 1 && len(reply) == 3, gen, now, nil
}

// parseTails reads the logs' tails of a commit reply that did not append.
func parseTails(reply []any) (from [2]int64, tails [2][]byte, err error) {
	for i := range 2 {
		f, ok1 := reply[3+2*i].(int64)
		b, ok2 := reply[4+2*i].(string)
		if !ok1 || !ok2 {
			return from, tails, fmt.Errorf("unexpected reply %v", reply[3:])
		}
		from[i], tails[i] = f, []byte(b)
	}
	return from, tails, nil
}

// timeArg is the time the script takes: Options.Now in ms, or -1 for the
// server's clock.
func (x *Index) timeArg() int64 {
	if x.opts.Now == nil {
		return -1
	}
	return x.opts.Now().UnixMilli()
}

// nowMs is the time a batch is decided at: Options.Now, or the server's
// clock as of the last reply plus the time since.
func (x *Index) nowMs() int64 {
	if x.opts.Now != nil {
		return x.opts.Now().UnixMilli()
	}
	return x.serverMs + time.Since(x.at).Milliseconds()
}
