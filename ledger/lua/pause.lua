-- Ledger.Pause (client pause): stop a job where it is. K: state, then
-- outbox.lua's keys. A: now (RFC 3339). A pending or running job, or a recurring one between
-- rounds, becomes S_PAUSED, the state it was in kept (F_PAUSED_FROM) for
-- resume to restore. Nothing else changes: its queues, frontier, leases
-- and counters stay as they are. Its master stops taking list pages and
-- starts no round while it is paused; its slaves stop taking its tasks
-- and hand back those they hold but have not sent (uncounted). Fails
-- NOJOB for a job never submitted, CANCELLING for one client cancel asked
-- to stop, PAUSED for one paused already, FINISHED for one that runs no
-- more rounds. The pause's event goes to the job's outbox (webhooks) in
-- the same step. Reply the state it was paused in.
local now = A[1]
local state = redis.call('HGET', K[1], F_STATE)
if not state then
  return fail('NOJOB', 'the job was never submitted')
end
if redis.call('HEXISTS', K[1], F_CANCEL) == 1 then
  return fail('CANCELLING', 'client cancel asked to stop the job; its master is stopping it')
end
if state == S_PAUSED then
  return fail('PAUSED', 'the job is paused already (since ' .. (redis.call('HGET', K[1], F_PAUSED_AT) or '?') .. ')')
end
if state == S_FINISHED and redis.call('HEXISTS', K[1], F_NEXT_ROUND_AT) == 0 then
  return fail('FINISHED', 'the job is finished and runs no more rounds')
end
redis.call('HSET', K[1], F_STATE, S_PAUSED, F_PAUSED_AT, now, F_PAUSED_FROM, state)
recordEvent(K[1], E_PAUSED, now)
return state
