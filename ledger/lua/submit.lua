-- Ledger.Submit (client submit): store a job's spec and seeds and mark it
-- pending, unless a job of that name is pending, running or paused. KEYS:
-- spec, state, stats, seeds, staged seeds, budget hash. ARGV: spec JSON,
-- now. The seeds were written to the staging list a batch per command
-- beforehand; here they replace the job's seeds in one step (UNLINK frees
-- the old ones off Redis's main thread). A finished job is submitted anew: its counters restart, while its dupefilter keeps what
-- it saw inside the window. Reply 'ok', or the state of the active job.
local fState, fSubmitted, fStarted, fFinished, fNext, fCancel, fCancelled =
  F_STATE, F_SUBMITTED_AT, F_STARTED_AT, F_FINISHED_AT, F_NEXT_ROUND_AT, F_CANCEL, F_CANCELLED_AT
local pending, running = S_PENDING, S_RUNNING
local state = redis.call('HGET', KEYS[2], fState)
if state == pending or state == running or state == S_PAUSED then
  redis.call('UNLINK', KEYS[5])
  return state
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('UNLINK', KEYS[4])
if redis.call('EXISTS', KEYS[5]) == 1 then
  redis.call('RENAME', KEYS[5], KEYS[4])
end
redis.call('HSET', KEYS[2], fState, pending, fSubmitted, ARGV[2])
redis.call('HDEL', KEYS[2], fStarted, fFinished, fNext, fCancel, fCancelled, F_BUDGET_REACHED)
redis.call('DEL', KEYS[3], KEYS[6])
return 'ok'
