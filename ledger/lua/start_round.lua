-- frontier.startRound: a master's start of a round, fenced: begin round
-- A[1] of a job. K: state, listseen and committed of the previous
-- round, budget hash. A: round, now (RFC 3339). It marks the job
-- running at that round with no seed queued yet and forgets the previous
-- round's list-page bookkeeping and page budget (budget.lua). Reply 1, or
-- 0 if the job is at that round already or paused (client pause between
-- the runner's read and this step: the round waits for resume).
local round, now = tonumber(A[1]), A[2]
local fState, fRound, fStarted, fFinished, fNext, fSeeded =
  F_STATE, F_ROUND, F_STARTED_AT, F_FINISHED_AT, F_NEXT_ROUND_AT, F_SEEDED
local running = S_RUNNING
local cur = tonumber(redis.call('HGET', K[1], fRound) or '0')
if cur >= round or redis.call('HGET', K[1], fState) == S_PAUSED then
  return 0
end
redis.call('HSET', K[1], fState, running, fRound, round, fStarted, now, fSeeded, 0)
redis.call('HDEL', K[1], fFinished, fNext, F_BUDGET_REACHED)
redis.call('DEL', K[2], K[3], K[4])
return 1
