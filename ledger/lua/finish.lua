-- frontier.tryFinish: a master's finish step, fenced: mark a job's round
-- finished if nothing is left. K:
-- state, frontier, pages in progress, retry list, seeds, render-wait list,
-- then per slave its queue and in-flight set (outbox.lua's keys follow). A: now (RFC 3339), the next round's time or ''
-- for none.
-- Reply R_ROUND_FINISHED when finished, R_ROUND_CANCEL when client
-- cancel asked to stop the job (the master then cancels it:
-- frontier.cancel), R_ROUND_PAUSED when client pause paused it (the
-- master stops the round where it is), else R_ROUND_RUNNING. Nothing is left when
-- every seed is queued, no list page waits or is in progress, no retried
-- task waits to be routed, no task waits for a slave that can render
-- (render-wait list), and no slave has a task queued or in flight. A
-- round that finishes appends its event to the outbox: finished, or
-- failed when the job has stored nothing.
local now, nextRound = A[1], A[2]
local fState, fSeeded, fFinished, fNext, fCancel, running, finished =
  F_STATE, F_SEEDED, F_FINISHED_AT, F_NEXT_ROUND_AT, F_CANCEL, S_RUNNING, S_FINISHED
if redis.call('HEXISTS', K[1], fCancel) == 1 then
  return R_ROUND_CANCEL
end
local state = redis.call('HGET', K[1], fState)
if state == S_PAUSED then
  return R_ROUND_PAUSED
end
if state ~= running then
  return R_ROUND_RUNNING
end
if tonumber(redis.call('HGET', K[1], fSeeded) or '0') < redis.call('LLEN', K[5]) then
  return R_ROUND_RUNNING
end
if redis.call('LLEN', K[2]) > 0 or redis.call('ZCARD', K[3]) > 0 or redis.call('LLEN', K[4]) > 0
    or redis.call('LLEN', K[6]) > 0 then
  return R_ROUND_RUNNING
end
for i = 7, #K, 2 do
  if redis.call('LLEN', K[i]) > 0 or redis.call('ZCARD', K[i + 1]) > 0 then
    return R_ROUND_RUNNING
  end
end
redis.call('HSET', K[1], fState, finished, fFinished, now)
if nextRound ~= '' then
  redis.call('HSET', K[1], fNext, nextRound)
end
recordEvent(K[1], roundEvent(), now)
return R_ROUND_FINISHED
