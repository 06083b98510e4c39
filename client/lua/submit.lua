-- client.Submit: store a job's spec and seeds and mark it pending, unless
-- a job of that name is pending or running. KEYS: spec, state, stats,
-- seeds, staged seeds. ARGV: spec JSON, now, the state's field names
-- (state, submitted_at, started_at, finished_at, next_round_at,
-- cancel_requested, cancelled_at) and the pending and running values. The seeds were written to the staging list
-- a batch per command beforehand; here they replace the job's seeds in one
-- step (UNLINK frees the old ones off Redis's main thread). A finished job
-- is submitted anew: its counters restart, while its dupefilter keeps what
-- it saw inside the window. Reply 'ok', or the state of the active job.
local fState, fSubmitted, fStarted, fFinished, fNext, fCancel, fCancelled =
  ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local pending, running = ARGV[10], ARGV[11]
local state = redis.call('HGET', KEYS[2], fState)
if state == pending or state == running then
  redis.call('UNLINK', KEYS[5])
  return state
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('UNLINK', KEYS[4])
if redis.call('EXISTS', KEYS[5]) == 1 then
  redis.call('RENAME', KEYS[5], KEYS[4])
end
redis.call('HSET', KEYS[2], fState, pending, fSubmitted, ARGV[2])
redis.call('HDEL', KEYS[2], fStarted, fFinished, fNext, fCancel, fCancelled)
redis.call('DEL', KEYS[3])
return 'ok'
