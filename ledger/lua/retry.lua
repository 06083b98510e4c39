-- Ledger.Retry (client retry-failed): re-enqueue failed detail tasks for
-- the master to route. KEYS: retry list, retrying set, state. ARGV:
-- fingerprint/task pairs. A task whose fingerprint is already being
-- retried is skipped, so running retry-failed twice enqueues nothing
-- twice. A finished job goes back to running. Reply the number enqueued.
local fState, finished, running, fFinished = F_STATE, S_FINISHED, S_RUNNING, F_FINISHED_AT
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[1], ARGV[i + 1])
    n = n + 1
  end
end
if n > 0 and redis.call('HGET', KEYS[3], fState) == finished then
  redis.call('HSET', KEYS[3], fState, running)
  redis.call('HDEL', KEYS[3], fFinished)
end
return n
