package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// takeScript moves up to ARGV[1] tasks from the head of KEYS[1] (queue) into
// KEYS[2] (in flight) with a lease of ARGV[2] ms, and returns them.
var takeScript = redis.NewScript(`
local t = redis.call('TIME')
local deadline = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
local out = {}
for i = 1, tonumber(ARGV[1]) do
  local task = redis.call('LPOP', KEYS[1])
  if not task then break end
  redis.call('ZADD', KEYS[2], deadline, task)
  out[#out + 1] = task
end
return out
`)

// renewScript extends the lease of the tasks in ARGV[2..] that are still in
// flight in KEYS[1] to now + ARGV[1] ms, and returns how many it renewed.
var renewScript = redis.NewScript(`
local t = redis.call('TIME')
local deadline = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
local n = 0
for i = 2, #ARGV do
  n = n + redis.call('ZADD', KEYS[1], 'XX', 'CH', deadline, ARGV[i])
end
return n
`)

// ackScript acknowledges tasks in flight in KEYS[1], counting outcomes in
// KEYS[2] (the job's stats). KEYS[3] is the set of re-enqueued failed tasks.
// ARGV[1] is the slave ID; then per task five values: the task, its outcome
// (s stored, f failed, r stored after a retry, x failed again after a
// retry), a near-duplicate flag (0/1), the retries it took, and its
// fingerprint. A task no longer in flight (its lease lapsed and it was
// reclaimed) is not counted; nor is a retried task no longer in KEYS[3].
// A retried page already counts as failed: stored now, it moves from
// failed to stored; failed again, it stays failed. Returns the number counted.
var ackScript = redis.NewScript(`
local slave = ARGV[1]
local counted = 0
for i = 2, #ARGV, 5 do
  local code = ARGV[i + 1]
  local ok = redis.call('ZREM', KEYS[1], ARGV[i]) == 1
  if ok and (code == 'r' or code == 'x') then ok = redis.call('SREM', KEYS[3], ARGV[i + 4]) == 1 end
  if ok then
    if code == 's' or code == 'r' then
      redis.call('HINCRBY', KEYS[2], 'stored', 1)
      redis.call('HINCRBY', KEYS[2], 'stored:' .. slave, 1)
    elseif code == 'f' then
      redis.call('HINCRBY', KEYS[2], 'failed', 1)
      redis.call('HINCRBY', KEYS[2], 'failed:' .. slave, 1)
    end
    if code == 'r' then
      redis.call('HINCRBY', KEYS[2], 'failed', -1)
      redis.call('HINCRBY', KEYS[2], 'recovered', 1)
    end
    if ARGV[i + 2] == '1' then redis.call('HINCRBY', KEYS[2], 'near_duplicates', 1) end
    local retries = tonumber(ARGV[i + 3])
    if retries > 0 then redis.call('HINCRBY', KEYS[2], 'retries', retries) end
    counted = counted + 1
  end
end
return counted
`)

// reclaimScript moves tasks in flight in KEYS[1] whose lease lapsed back to
// the head of queue KEYS[2], at most ARGV[1] of them, and returns how many.
var reclaimScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
for _, task in ipairs(expired) do
  redis.call('ZREM', KEYS[1], task)
  redis.call('LPUSH', KEYS[2], task)
end
return #expired
`)

// Leased is a list of work with a sorted set of the entries taken from it,
// scored by lease deadline: the pattern behind both the slave queues and the
// master's list-page frontier.
type Leased struct {
	rdb            redis.UniversalClient
	list, inflight string
}

// NewLeased returns the leased list whose waiting entries are in the list
// key and whose taken entries are in the inflight sorted set; both keys must
// share a hash tag.
func NewLeased(rdb redis.UniversalClient, list, inflight string) *Leased {
	return &Leased{rdb: rdb, list: list, inflight: inflight}
}

// Take moves up to n entries from the head of the list into the in-flight
// set with the given lease and returns them.
func (l *Leased) Take(ctx context.Context, n int, lease time.Duration) ([]string, error) {
	res, err := takeScript.Run(ctx, l.rdb, []string{l.list, l.inflight}, n, lease.Milliseconds()).StringSlice()
	if err != nil && err != redis.Nil {
		return nil, fmt.Errorf("take from %s: %w", l.list, err)
	}
	return res, nil
}

// Renew extends the lease of entries still in flight.
func (l *Leased) Renew(ctx context.Context, entries []string, lease time.Duration) error {
	if len(entries) == 0 {
		return nil
	}
	args := make([]any, 0, len(entries)+1)
	args = append(args, lease.Milliseconds())
	for _, e := range entries {
		args = append(args, e)
	}
	if err := renewScript.Run(ctx, l.rdb, []string{l.inflight}, args...).Err(); err != nil {
		return fmt.Errorf("renew %d leases in %s: %w", len(entries), l.inflight, err)
	}
	return nil
}

// Reclaim puts entries whose lease lapsed back at the head of the list, for
// redelivery, and returns how many it moved.
func (l *Leased) Reclaim(ctx context.Context) (int, error) {
	n, err := reclaimScript.Run(ctx, l.rdb, []string{l.inflight, l.list}, 1000).Int()
	if err != nil {
		return 0, fmt.Errorf("reclaim %s: %w", l.inflight, err)
	}
	return n, nil
}

// releaseScript hands entries back: each one still in flight in KEYS[1] is
// removed and pushed back at the head of KEYS[2]. Returns how many.
var releaseScript = redis.NewScript(`
local n = 0
for i = 1, #ARGV do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then
    redis.call('LPUSH', KEYS[2], ARGV[i])
    n = n + 1
  end
end
return n
`)

// Release hands entries still in flight back to the head of the list, for a
// graceful shutdown, and returns how many it moved.
func (l *Leased) Release(ctx context.Context, entries []string) (int, error) {
	if len(entries) == 0 {
		return 0, nil
	}
	args := make([]any, len(entries))
	for i, e := range entries {
		args[i] = e
	}
	n, err := releaseScript.Run(ctx, l.rdb, []string{l.inflight, l.list}, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("release %d entries of %s: %w", len(entries), l.inflight, err)
	}
	return n, nil
}

// expiringScript returns the entries of in-flight set KEYS[1] whose lease
// ends within ARGV[1] ms of the server's clock.
var expiringScript = redis.NewScript(`
local t = redis.call('TIME')
local limit = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', limit)
`)

// Expiring returns the in-flight entries whose lease ends within d. A
// holder that renews its entries' leases every d/2 or so finds here only
// entries it does not know it holds: taken by a call whose reply was lost,
// or by an earlier run of the same holder.
func (l *Leased) Expiring(ctx context.Context, d time.Duration) ([]string, error) {
	res, err := expiringScript.Run(ctx, l.rdb, []string{l.inflight}, d.Milliseconds()).StringSlice()
	if err != nil && err != redis.Nil {
		return nil, fmt.Errorf("list expiring entries of %s: %w", l.inflight, err)
	}
	return res, nil
}

// Queue is one job's set of per-slave task queues.
type Queue struct {
	rdb  redis.UniversalClient
	keys cluster.JobKeys
}

// New returns the queues of the job whose keys are keys.
func New(rdb redis.UniversalClient, keys cluster.JobKeys) *Queue {
	return &Queue{rdb: rdb, keys: keys}
}

// Slave returns slave's queue as a leased list.
func (q *Queue) Slave(slave int) *Leased {
	return NewLeased(q.rdb, q.keys.Queue(slave), q.keys.Inflight(slave))
}

// Outcome is how a task ended.
type Outcome struct {
	// Task is the task's wire form, exactly as taken.
	Task string
	// Failed is true when the page was recorded as failed, not stored.
	Failed bool
	// NearDuplicate is true when the stored item was marked a near-duplicate.
	NearDuplicate bool
	// Retries is how many extra tries the fetch took.
	Retries int
	// Retried marks a task re-enqueued by client retry-failed, whose
	// fingerprint is FP.
	Retried bool
	FP      string
}

// code is the outcome's one-letter form in the ack script.
func (o Outcome) code() string {
	switch {
	case o.Retried && o.Failed:
		return "x"
	case o.Retried:
		return "r"
	case o.Failed:
		return "f"
	}
	return "s"
}

// Ack acknowledges tasks that slave, the holder of this in-flight set,
// finished, and counts their outcomes in the job's stats hash (retried
// tasks are checked off the retrying set); tasks no longer in flight are
// not counted again. It returns how many were counted.
func (l *Leased) Ack(ctx context.Context, slave int, stats, retrying string, outcomes []Outcome) (int, error) {
	if len(outcomes) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 1+5*len(outcomes))
	args = append(args, slave)
	for _, o := range outcomes {
		args = append(args, o.Task, o.code(), boolFlag(o.NearDuplicate), o.Retries, o.FP)
	}
	n, err := ackScript.Run(ctx, l.rdb, []string{l.inflight, stats, retrying}, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("ack %d tasks of slave %d: %w", len(outcomes), slave, err)
	}
	return n, nil
}

func boolFlag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Depth is the number of tasks waiting and in flight for each slave.
type Depth struct {
	Queued   []int64
	Inflight []int64
}

// Total returns the tasks waiting and in flight over all slaves.
func (d Depth) Total() (queued, inflight int64) {
	for i := range d.Queued {
		queued += d.Queued[i]
		inflight += d.Inflight[i]
	}
	return queued, inflight
}

// Depth reads the queue depths of slaves 0..slaves-1 in one round trip.
func (q *Queue) Depth(ctx context.Context, slaves int) (Depth, error) {
	pipe := q.rdb.Pipeline()
	ql := make([]*redis.IntCmd, slaves)
	il := make([]*redis.IntCmd, slaves)
	for i := 0; i < slaves; i++ {
		ql[i] = pipe.LLen(ctx, q.keys.Queue(i))
		il[i] = pipe.ZCard(ctx, q.keys.Inflight(i))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return Depth{}, fmt.Errorf("read queue depths: %w", err)
	}
	d := Depth{Queued: make([]int64, slaves), Inflight: make([]int64, slaves)}
	for i := 0; i < slaves; i++ {
		d.Queued[i], d.Inflight[i] = ql[i].Val(), il[i].Val()
	}
	return d, nil
}

// Items returns the wire form of every task waiting or in flight for slave.
func (q *Queue) Items(ctx context.Context, slave int) (queued, inflight []string, err error) {
	queued, err = q.rdb.LRange(ctx, q.keys.Queue(slave), 0, -1).Result()
	if err != nil {
		return nil, nil, fmt.Errorf("list queue of slave %d: %w", slave, err)
	}
	inflight, err = q.rdb.ZRange(ctx, q.keys.Inflight(slave), 0, -1).Result()
	if err != nil {
		return nil, nil, fmt.Errorf("list in-flight of slave %d: %w", slave, err)
	}
	return queued, inflight, nil
}
