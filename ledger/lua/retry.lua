-- Ledger.Retry (client retry-failed): re-enqueue failed detail tasks for
-- the master to route. KEYS: retry list, retrying set, state. ARGV:
-- fingerprint/task pairs. A task whose fingerprint is already being
-- retried is skipped, so running retry-failed twice enqueues nothing
-- twice. A finished job goes back to running; a job paused between
-- rounds goes back to running when resumed. Reply the number enqueued.
local fState, finished, running, fFinished = F_STATE, S_FINISHED, S_RUNNING, F_FINISHED_AT
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[1], ARGV[i + 1])
    n = n + 1
  end
end
local state = n > 0 and redis.call('HGET', KEYS[3], fState)
if state == finished then
  redis.call('HSET', KEYS[3], fState, running)
  redis.call('HDEL', KEYS[3], fFinished)
elseif state == S_PAUSED and redis.call('HGET', KEYS[3], F_PAUSED_FROM) == finished then
  redis.call('HSET', KEYS[3], F_PAUSED_FROM, running)
  redis.call('HDEL', KEYS[3], fFinished)
end
return n
