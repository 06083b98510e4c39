package master

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
)

// errFenced is returned when another master took the job over: this one's
// fencing token is stale and it must stop acting on the job.
var errFenced = errors.New("job taken over by another master (stale fencing token)")

// fenced wraps a frontier script so it runs only while the job's fence
// (KEYS[1]) still holds this master's token (ARGV[1]). The body sees the
// remaining keys and arguments as K and A.
func fenced(body string) *redis.Script {
	return redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('FENCED') end
local K, A = {}, {}
for i = 2, #KEYS do K[i - 1] = KEYS[i] end
for i = 2, #ARGV do A[i - 1] = ARGV[i] end
` + body)
}

// startRoundScript begins round A[1] of a job: it marks the job running,
// forgets the previous round's list-page bookkeeping and puts the seeds on
// the frontier. K: state, frontier, listseen(round), listseen(round-1),
// committed(round-1). A: round, now (RFC 3339), then fingerprint/page pairs
// of the seeds. It does nothing if the job is already at that round.
var startRoundScript = fenced(`
local round = tonumber(A[1])
local cur = tonumber(redis.call('HGET', K[1], 'round') or '0')
if cur >= round then return 0 end
redis.call('HSET', K[1], 'state', 'running', 'round', round, 'started_at', A[2])
redis.call('HDEL', K[1], 'finished_at', 'next_round_at')
redis.call('DEL', K[4], K[5])
for i = 3, #A, 2 do
  if redis.call('SADD', K[3], A[i]) == 1 then
    redis.call('RPUSH', K[2], A[i + 1])
  end
end
return 1
`)

// commitListScript finishes a list page: it removes the page from the pages
// in progress (K[1]) or, if its lease lapsed and it was put back, from the
// frontier (K[2]); appends the next list pages not yet seen this round
// (K[3]) to the frontier; and, if this call removed the page, adds its
// counters to the stats (K[4]), so a page fetched twice counts once.
// A: page, n, then n counter/increment pairs, then fingerprint/page pairs
// of the next pages.
var commitListScript = fenced(`
local removed = redis.call('ZREM', K[1], A[1]) + redis.call('LREM', K[2], 1, A[1])
local n = tonumber(A[2])
for i = 3 + 2 * n, #A, 2 do
  if redis.call('SADD', K[3], A[i]) == 1 then
    redis.call('RPUSH', K[2], A[i + 1])
  end
end
if removed > 0 then
  for i = 3, 2 + 2 * n, 2 do
    redis.call('HINCRBY', K[4], A[i], A[i + 1])
  end
end
return removed
`)

// finishScript marks a job's round finished if nothing is left: no list page
// waiting (K[2]) or in progress (K[3]), no retried task waiting to be routed
// (K[4]) and, for every slave, no task queued or in flight (K[5..],
// queue/inflight pairs). K[1] is the state. A: now (RFC 3339), next round
// time or "" for none.
var finishScript = fenced(`
if redis.call('HGET', K[1], 'state') ~= 'running' then return 0 end
if redis.call('LLEN', K[2]) > 0 or redis.call('ZCARD', K[3]) > 0 or redis.call('LLEN', K[4]) > 0 then return 0 end
for i = 5, #K, 2 do
  if redis.call('LLEN', K[i]) > 0 or redis.call('ZCARD', K[i + 1]) > 0 then return 0 end
end
redis.call('HSET', K[1], 'state', 'finished', 'finished_at', A[1])
if A[2] ~= '' then redis.call('HSET', K[1], 'next_round_at', A[2]) end
return 1
`)

// frontier is one job's list-page frontier in Redis, acted on under a
// fencing token.
type frontier struct {
	rdb       redis.UniversalClient
	keys      cluster.JobKeys
	maxSlaves int
	fence     int64
}

// run runs a fenced script with the fence prepended to keys and args.
func (f *frontier) run(ctx context.Context, s *redis.Script, keys []string, args ...any) *redis.Cmd {
	keys = append([]string{f.keys.Fence()}, keys...)
	args = append([]any{strconv.FormatInt(f.fence, 10)}, args...)
	return s.Run(ctx, f.rdb, keys, args...)
}

// translate turns the scripts' FENCED reply into errFenced.
func translate(err error) error {
	if err != nil && strings.Contains(err.Error(), "FENCED") {
		return errFenced
	}
	return err
}

// pageRef is a list page with its fingerprint, ready for the frontier.
type pageRef struct {
	fp   string
	page cluster.ListPage
}

func pairs(refs []pageRef) []any {
	args := make([]any, 0, 2*len(refs))
	for _, r := range refs {
		args = append(args, r.fp, r.page.Encode())
	}
	return args
}

// startRound puts the seeds of round on the frontier; it reports false if
// the job was already at that round.
func (f *frontier) startRound(ctx context.Context, round int64, seeds []pageRef) (bool, error) {
	keys := []string{f.keys.State(), f.keys.Frontier(), f.keys.ListSeen(round),
		f.keys.ListSeen(round - 1), f.keys.Committed(round - 1)}
	args := append([]any{round, time.Now().UTC().Format(time.RFC3339)}, pairs(seeds)...)
	n, err := f.run(ctx, startRoundScript, keys, args...).Int()
	if err != nil {
		return false, fmt.Errorf("start round %d: %w", round, translate(err))
	}
	return n == 1, nil
}

// commit finishes list page member, queueing next, and adds counters to the
// job's stats.
func (f *frontier) commit(ctx context.Context, round int64, member string, counters map[string]int64, next []pageRef) error {
	keys := []string{f.keys.FrontierActive(), f.keys.Frontier(), f.keys.ListSeen(round), f.keys.Stats()}
	args := make([]any, 0, 2+2*len(counters)+2*len(next))
	args = append(args, member, len(counters))
	for name, n := range counters {
		args = append(args, name, n)
	}
	args = append(args, pairs(next)...)
	if err := f.run(ctx, commitListScript, keys, args...).Err(); err != nil {
		return fmt.Errorf("commit list page: %w", translate(err))
	}
	return nil
}

// tryFinish marks the round finished if no work is left.
func (f *frontier) tryFinish(ctx context.Context, nextRound time.Time) (bool, error) {
	keys := make([]string, 0, 4+2*f.maxSlaves)
	keys = append(keys, f.keys.State(), f.keys.Frontier(), f.keys.FrontierActive(), f.keys.Retry())
	for i := 0; i < f.maxSlaves; i++ {
		keys = append(keys, f.keys.Queue(i), f.keys.Inflight(i))
	}
	next := ""
	if !nextRound.IsZero() {
		next = nextRound.UTC().Format(time.RFC3339Nano) // whole seconds would start a 1s recrawl early
	}
	n, err := f.run(ctx, finishScript, keys, time.Now().UTC().Format(time.RFC3339), next).Int()
	if err != nil {
		return false, fmt.Errorf("check finished: %w", translate(err))
	}
	return n == 1, nil
}

// state reads the job's state hash.
func (f *frontier) state(ctx context.Context) (state string, round int64, nextRound time.Time, err error) {
	m, err := f.rdb.HGetAll(ctx, f.keys.State()).Result()
	if err != nil {
		return "", 0, time.Time{}, fmt.Errorf("read job state: %w", err)
	}
	round, _ = strconv.ParseInt(m[cluster.StateRound], 10, 64)
	nextRound, _ = time.Parse(time.RFC3339, m[cluster.StateNextRoundAt])
	return m[cluster.StateField], round, nextRound, nil
}
