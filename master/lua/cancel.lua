-- frontier.cancel: stop a job as client cancel asked. K: state, stats,
-- frontier, pages in progress, retry list, retrying set, then every slave
-- queue. A: now (RFC 3339), the state's field names (state, finished_at,
-- next_round_at, cancel_requested, cancelled_at), the finished value and
-- the stats field counting what is dropped, and "1" to finish the job
-- ("0" only drops, so slaves stop at once while the master waits for its
-- list pages in progress before the final call). The tasks still queued are
-- dropped unfetched and counted, so the counters keep adding up
-- (discovered = stored + failed + skipped + duplicates + cancelled); tasks
-- in flight are left to their slaves, which acknowledge them as usual.
-- Failed tasks waiting for another try stay failed. Reply the tasks
-- dropped.
local now = A[1]
local fState, fFinished, fNext, fCancel, fCancelled, finished, cancelled, finish =
  A[2], A[3], A[4], A[5], A[6], A[7], A[8], A[9]
local dropped = 0
for i = 7, #K do
  dropped = dropped + redis.call('LLEN', K[i])
end
redis.call('DEL', K[3], K[4], K[5], K[6])
for i = 7, #K do
  redis.call('DEL', K[i])
end
if dropped > 0 then
  redis.call('HINCRBY', K[2], cancelled, dropped)
end
if finish == '1' then
  redis.call('HSET', K[1], fState, finished, fFinished, now, fCancelled, now)
  redis.call('HDEL', K[1], fNext, fCancel)
end
return dropped
