package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// reclaimBatch is the most lapsed entries one Reclaim call moves.
const reclaimBatch = 1000

// LeasedKeys names the keys of one leased list. They must share a hash tag.
type LeasedKeys struct {
	// List holds the entries waiting, head first.
	List string
	// Inflight is a sorted set of the entries taken, scored by lease
	// deadline (unix ms, Redis's clock); on a slave queue half a
	// millisecond less marks an entry whose fetch has begun (MarkStarted).
	Inflight string
	// Attempts is a hash counting, for each entry handed back after a
	// delivery that did not finish it (a lapsed lease, a requeue, a dead
	// holder's tasks moved), how many such deliveries there were, with the
	// reason its last holder gave up; an entry that keeps coming back is
	// poison, and its holder dead-letters it. On a slave queue only
	// deliveries whose fetch began count (see MarkStarted); the others are
	// counted apart. First deliveries write nothing, so a crawl in which
	// nothing fails never touches it (and a take or an ack never reads it).
	Attempts string
	// Bands, when set, keeps the list in bands by priority, highest first
	// (a slave queue of a job whose pages have priorities): List is the
	// band of priority 0, one of them. Take takes from the band of the
	// highest effective priority (see Aging), and an entry handed back
	// goes to the band of its own priority (cluster.Task.Priority).
	Bands []Band
	// Served is the hash of when each band was last served, by priority;
	// needed with Bands.
	Served string
}

// Band is one band of a leased list kept in bands: the list of the
// entries of one priority.
type Band struct {
	Priority int
	List     string
}

// DefaultAging is how long a band of a leased list (or a job on a
// slave) waits to gain one priority, when nothing else is said: a band
// one below the highest is served at least once every DefaultAging.
const DefaultAging = 10 * time.Second

// bandArgs are the bands' keys and the arguments read_bands
// (handback.lua) reads: their number, then their priorities.
func (k LeasedKeys) bandArgs() ([]string, []any) {
	keys := make([]string, 0, len(k.Bands))
	args := make([]any, 0, 1+len(k.Bands))
	args = append(args, len(k.Bands))
	for _, b := range k.Bands {
		keys, args = append(keys, b.List), append(args, b.Priority)
	}
	return keys, args
}

// Leased is a list of work with a sorted set of the entries taken from it,
// scored by lease deadline: the pattern behind both the slave queues and the
// master's list-page frontier.
//
// A Leased list either counts every delivery that ends without an outcome
// toward dead-lettering (NewLeased: the master's frontier), or only those
// whose work had begun (a slave queue: see MarkStarted).
type Leased struct {
	rdb   redis.UniversalClient
	keys  LeasedKeys
	marks bool // only deliveries marked started count
	// aging is how long a band waits to gain one priority (keys.Bands).
	aging time.Duration
}

// NewLeased returns the leased list with the given keys.
func NewLeased(rdb redis.UniversalClient, keys LeasedKeys) *Leased {
	return &Leased{rdb: rdb, keys: keys}
}

// MarkStarted records that the work on entries still in flight has begun
// (a slave is about to send the page's first request). Of the deliveries
// that end without an outcome, only those so marked count toward
// dead-lettering: a holder that dies before it begins is not the entry's
// fault. It returns how many were marked.
func (l *Leased) MarkStarted(ctx context.Context, entries []string) (int, error) {
	if len(entries) == 0 {
		return 0, nil
	}
	n, err := markScript.Run(ctx, l.rdb, []string{l.keys.Inflight}, appendStrings(nil, entries)...).Int()
	if err != nil {
		return 0, fmt.Errorf("mark %d entries of %s started: %w", len(entries), l.keys.Inflight, err)
	}
	return n, nil
}

// Delivery is an entry handed out by Take.
type Delivery struct {
	// Entry is the entry exactly as queued.
	Entry string
	// Count is how many times it has been delivered, this time included.
	Count int
	// LastError is the reason the last holder gave up on it (see Note), or
	// "" when there is none.
	LastError string
}

// Take moves up to n entries from the head of the list into the in-flight
// set with the given lease and returns them with their delivery counts.
//
// A list kept in bands takes from the band of the highest effective
// priority first: its priority plus one for each aging step (SetAging)
// it has waited since it was last served, on Redis's clock; then from the
// next, until it has n.
func (l *Leased) Take(ctx context.Context, n int, lease time.Duration) ([]Delivery, error) {
	var res []any
	var err error
	if len(l.keys.Bands) == 0 {
		res, err = takeScript.Run(ctx, l.rdb, []string{l.keys.List, l.keys.Inflight, l.keys.Attempts},
			n, lease.Milliseconds()).Slice()
	} else {
		res, err = l.takeBands(ctx, n, lease)
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("take from %s: %w", l.keys.List, err)
	}
	out := make([]Delivery, 0, len(res)/3)
	for i := 0; i+2 < len(res); i += 3 {
		entry, _ := res[i].(string)
		count, _ := res[i+1].(int64)
		reason, _ := res[i+2].(string)
		out = append(out, Delivery{Entry: entry, Count: int(count), LastError: reason})
	}
	return out, nil
}

func (l *Leased) takeBands(ctx context.Context, n int, lease time.Duration) ([]any, error) {
	keys := []string{l.keys.Inflight, l.keys.Attempts, l.keys.Served}
	args := []any{n, lease.Milliseconds(), max(1, l.Aging().Milliseconds())}
	for _, b := range l.keys.Bands {
		keys, args = append(keys, b.List), append(args, b.Priority)
	}
	return takeBandsScript.Run(ctx, l.rdb, keys, args...).Slice()
}

// SetAging sets how long a band waits to gain one priority; 0 means
// DefaultAging.
func (l *Leased) SetAging(d time.Duration) { l.aging = d }

// Aging is how long a band waits to gain one priority.
func (l *Leased) Aging() time.Duration {
	if l.aging <= 0 {
		return DefaultAging
	}
	return l.aging
}

// Entries returns the entries of deliveries.
func Entries(ds []Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Entry
	}
	return out
}

// Renew extends the lease of entries still in flight.
func (l *Leased) Renew(ctx context.Context, entries []string, lease time.Duration) error {
	if len(entries) == 0 {
		return nil
	}
	args := make([]any, 0, len(entries)+1)
	args = append(args, lease.Milliseconds())
	args = appendStrings(args, entries)
	if err := renewScript.Run(ctx, l.rdb, []string{l.keys.Inflight}, args...).Err(); err != nil {
		return fmt.Errorf("renew %d leases in %s: %w", len(entries), l.keys.Inflight, err)
	}
	return nil
}

// Reclaim puts entries whose lease lapsed back at the head of the list, for
// redelivery, and returns how many it moved. The delivery counts (with
// start marks, only if it had begun).
func (l *Leased) Reclaim(ctx context.Context) (int, error) {
	bandKeys, bandArgs := l.keys.bandArgs()
	keys := append([]string{l.keys.Inflight, l.keys.List, l.keys.Attempts}, bandKeys...)
	n, err := reclaimScript.Run(ctx, l.rdb, keys, append([]any{reclaimBatch, flag(l.marks)}, bandArgs...)...).Int()
	if err != nil {
		return 0, fmt.Errorf("reclaim %s: %w", l.keys.Inflight, err)
	}
	return n, nil
}

// Release hands entries still in flight back to the head of the list, for
// a graceful shutdown that never started them: their delivery does not
// count. It returns how many it moved.
func (l *Leased) Release(ctx context.Context, entries []string) (int, error) {
	return l.handBack(ctx, entries, true)
}

// Requeue hands entries still in flight back to the head of the list after
// an attempt that did not finish them (or a holder that died): their
// delivery counts (with start marks, only if it had begun), so an entry
// that always fails is dead-lettered in the end. It returns how many it
// moved.
func (l *Leased) Requeue(ctx context.Context, entries []string) (int, error) {
	return l.handBack(ctx, entries, false)
}

func (l *Leased) handBack(ctx context.Context, entries []string, uncount bool) (int, error) {
	return l.handBackTo(ctx, l.keys.List, entries, uncount)
}

// handBackTo hands entries still in flight to the head of list to, or of
// their own bands when to is the list kept in bands.
func (l *Leased) handBackTo(ctx context.Context, to string, entries []string, uncount bool) (int, error) {
	if len(entries) == 0 {
		return 0, nil
	}
	keys := []string{l.keys.Inflight, to, l.keys.Attempts}
	args := []any{flag(uncount), flag(l.marks)}
	if to == l.keys.List {
		bandKeys, bandArgs := l.keys.bandArgs()
		keys, args = append(keys, bandKeys...), append(args, bandArgs...)
	} else {
		args = append(args, 0)
	}
	args = appendStrings(args, entries)
	n, err := releaseScript.Run(ctx, l.rdb, keys, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("hand back %d entries of %s: %w", len(entries), l.keys.Inflight, err)
	}
	return n, nil
}

// Note records why the holder of entry could not finish it; the next
// delivery carries the reason, so a dead-lettered entry says what went
// wrong. It reports whether the entry was still in flight.
func (l *Leased) Note(ctx context.Context, entry, reason string) (bool, error) {
	n, err := noteScript.Run(ctx, l.rdb, []string{l.keys.Inflight, l.keys.Attempts},
		entry, reason).Int()
	if err != nil {
		return false, fmt.Errorf("note failure in %s: %w", l.keys.Inflight, err)
	}
	return n == 1, nil
}

// Orphans returns the in-flight entries whose lease ends within d, when
// there are more than held of them (those the holder knows it holds);
// else none, at the cost of one ZCARD. A holder whose leases run a full
// lease from each take or renewal finds here, with d a little under the
// lease, entries taken more than that little ago; those it does not hold
// were taken by a call whose reply was lost, or by an earlier run of the
// same holder.
func (l *Leased) Orphans(ctx context.Context, held int, d time.Duration) ([]string, error) {
	res, err := orphansScript.Run(ctx, l.rdb, []string{l.keys.Inflight}, d.Milliseconds(), held).StringSlice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("list orphaned entries of %s: %w", l.keys.Inflight, err)
	}
	return res, nil
}

func appendStrings(dst []any, ss []string) []any {
	for _, s := range ss {
		dst = append(dst, s)
	}
	return dst
}

// AttemptFields are the fields of the attempts hash that hold entry's
// delivery count and last reason: a script that finishes an entry its own
// way (the master's list-page commit) removes them in the same step.
func AttemptFields(entry string) []string {
	return []string{cluster.AttemptCountPrefix + entry, cluster.AttemptReasonPrefix + entry}
}

// flag is a script's boolean argument.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
