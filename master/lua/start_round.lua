-- frontier.startRound: begin round A[1] of a job. K: state, listseen and
-- committed of the previous round. A: round, now (RFC 3339), then the
-- state hash's field names: state, round, started_at, finished_at,
-- next_round_at, seeded; then the running state's value. It marks the job
-- running at that round with no seed queued yet and forgets the previous
-- round's list-page bookkeeping. Reply 0 if the job is at that round already.
local round, now = tonumber(A[1]), A[2]
local fState, fRound, fStarted, fFinished, fNext, fSeeded = A[3], A[4], A[5], A[6], A[7], A[8]
local running = A[9]
local cur = tonumber(redis.call('HGET', K[1], fRound) or '0')
if cur >= round then
  return 0
end
redis.call('HSET', K[1], fState, running, fRound, round, fStarted, now, fSeeded, 0)
redis.call('HDEL', K[1], fFinished, fNext)
redis.call('DEL', K[2], K[3])
return 1
