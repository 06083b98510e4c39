-- frontier.cancel: stop a job as client cancel asked. K: state, stats,
-- frontier, pages in progress, retry list, retrying set, task attempts,
-- list attempts, render-wait list, then per slave its queue and in-flight
-- set. A: now (RFC
-- 3339) and "1" to finish the job once nothing of it is in flight ("0"
-- only drops, so slaves stop at once while the master waits for its list
-- pages in progress). TASK_RETRY_MARKER marks a task that client
-- retry-failed re-enqueued.
-- Every call drops the tasks still queued and those in flight whose lease
-- lapsed (their slave died: nobody will acknowledge them), and counts them
-- as cancelled; tasks in flight under a live lease are left to their
-- slaves, which acknowledge them as usual (a dropped one's late
-- acknowledgement is not counted, as it is no longer in flight). So every
-- task is counted once, and once the job is finished, discovered = stored
-- + failed + skipped + duplicates + cancelled. Failed tasks waiting for
-- another try stay failed, queued or in flight: dropping them counts
-- nothing. Reply {tasks dropped, 1 if finished else 0}.
local now = A[1]
local fState, fFinished, fNext, fCancel, fCancelled, finished, cancelled, finish =
  F_STATE, F_FINISHED_AT, F_NEXT_ROUND_AT, F_CANCEL, F_CANCELLED_AT, S_FINISHED, F_STAT_CANCELLED, A[2]
local marker = TASK_RETRY_MARKER
local lapsedBy = int(now_ms())
local retrying = redis.call('SCARD', K[6]) > 0

-- counted is how many of entries are counted as cancelled when dropped:
-- all but retried ones (counted failed already), which exist only while
-- the retrying set does. In a job of several item kinds, each is counted
-- in its kind too.
local function counted(entries)
  if not retrying and not KIND_BY_ITEM then
    return #entries
  end
  local n = 0
  for _, e in ipairs(entries) do
    if not (retrying and string.find(e, marker, 1, true)) then
      n = n + 1
      countItemKind(e, 'cancelled')
    end
  end
  return n
end

local dropped, inflight = 0, 0
-- the tasks waiting for a slave that can render are dropped as queued ones
if retrying or KIND_BY_ITEM then
  dropped = dropped + counted(redis.call('LRANGE', K[9], 0, -1))
else
  dropped = dropped + redis.call('LLEN', K[9])
end
redis.call('DEL', K[9])
for i = 10, #K, 2 do
  if retrying or KIND_BY_ITEM then
    dropped = dropped + counted(redis.call('LRANGE', K[i], 0, -1))
  else
    dropped = dropped + redis.call('LLEN', K[i])
  end
  local lapsed = redis.call('ZRANGEBYSCORE', K[i + 1], '-inf', lapsedBy)
  if #lapsed > 0 then
    redis.call('ZREMRANGEBYSCORE', K[i + 1], '-inf', lapsedBy)
    dropped = dropped + counted(lapsed)
  end
  inflight = inflight + redis.call('ZCARD', K[i + 1])
  redis.call('DEL', K[i])
end
-- the list pages waiting or in progress are dropped too, each counted as
-- cancelled in its kind (kinds.lua): one in progress commits nothing now
for _, e in ipairs(redis.call('LRANGE', K[3], 0, -1)) do
  countKind(e, 'cancelled', 1)
end
for _, e in ipairs(redis.call('ZRANGE', K[4], 0, -1)) do
  countKind(e, 'cancelled', 1)
end
writeKinds()
redis.call('DEL', K[3], K[4], K[5], K[8])
if dropped > 0 then
  redis.call('HINCRBY', K[2], cancelled, dropped)
end
if finish ~= '1' or inflight > 0 then
  return {dropped, 0}
end
redis.call('HSET', K[1], fState, finished, fFinished, now, fCancelled, now)
redis.call('HDEL', K[1], fNext, fCancel)
redis.call('DEL', K[6], K[7])
return {dropped, 1}
