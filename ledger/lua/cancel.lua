-- Cancel: the job ledger's one script that stops a job: asked by
-- client cancel (after unfenced.lua) and carried out by the job's master
-- (after its fence.lua), in the same steps. K: state, owner, stats,
-- frontier, pages in progress, retry list, retrying set, task attempts,
-- list attempts, render-wait list, then per slave its queue and in-flight
-- set (outbox.lua's keys follow them; kinds.lua takes the stats key and
-- item kinds appended last). A:
-- now (RFC 3339), whether to finish the job once nothing of it is in
-- flight ('1'; '0' only drops, so slaves stop at once while the master
-- waits for its list pages in progress), and who acts: A_ASK for client
-- cancel, anything else (ledger.CarryOutArgs) for the master. Reply {what
-- happened (R_...), tasks dropped}.
--
-- Asked: a job that does not exist is R_NO_JOB; a finished one that runs
-- no more rounds R_FINISHED_ALREADY. A job some master holds is marked
-- (F_CANCEL) for it to carry out: R_ASKED. A pending job, or a recurring
-- one between rounds, that no master holds (none runs, or none under this
-- prefix) has nothing queued: it is finished here (its next round
-- dropped), R_FINISHED_HERE. A running one that no master holds is marked
-- and waits for one, as its slaves may still hold its tasks. A paused job
-- is asked as the state it was paused in (F_PAUSED_FROM) would be; a job
-- cancelled while paused ends finished, not paused.
--
-- Carried out: every call drops the tasks still queued and those in
-- flight whose lease lapsed (their slave died: nobody will acknowledge
-- them), and counts them as cancelled; tasks in flight under a live lease
-- are left to their slaves, which acknowledge them as usual (a dropped
-- one's late acknowledgement is not counted, as it is no longer in
-- flight). So every task is counted once, and once the job is finished,
-- discovered = stored + failed + skipped + duplicates + cancelled. Failed
-- tasks waiting for another try stay failed, queued or in flight:
-- dropping them counts nothing (TASK_RETRY_MARKER marks a task that client
-- retry-failed re-enqueued). Reply R_FINISHED_HERE once the job is
-- finished, else R_DRAINING. A job finished here, asked or carried out,
-- appends its cancelled event to the outbox (outbox.lua).
local now, finish, actor = A[1], A[2], A[3]
-- A master's stop on a budget (actor A_BUDGET, ledger.BudgetStopArgs)
-- is a cancel's drop with A[4] the budget reached, recorded in the state
-- (budget.lua then refuses every page), the tasks and list pages dropped
-- counted in the stats fields A[5] (skipped, skipped_<budget>) and in
-- their kinds as skipped, never finishing the job: its round ends as any
-- does, once nothing is left (finish.lua).
local budget = actor == A_BUDGET
local dropStat = 'cancelled'
if budget then
  redis.call('HSETNX', K[1], F_BUDGET_REACHED, A[4])
  finish, dropStat = '0', 'skipped'
end
local fState, fFinished, fNext, fCancel, fCancelled, finished, pending, cancelled =
  F_STATE, F_FINISHED_AT, F_NEXT_ROUND_AT, F_CANCEL, F_CANCELLED_AT, S_FINISHED, S_PENDING, F_STAT_CANCELLED
local marker = TASK_RETRY_MARKER

if actor == A_ASK then
  if redis.call('EXISTS', K[1]) == 0 then
    return {R_NO_JOB, 0}
  end
  local state, held = redis.call('HGET', K[1], fState), redis.call('EXISTS', K[2]) == 1
  local paused = state == S_PAUSED
  if paused then
    state = redis.call('HGET', K[1], F_PAUSED_FROM) or S_RUNNING
  end
  if state == finished and redis.call('HEXISTS', K[1], fNext) == 0 then
    return {R_FINISHED_ALREADY, 0}
  end
  if not held and (state == finished or state == pending) then
    if state == pending then
      redis.call('HSET', K[1], fState, finished, fFinished, now)
    elseif paused then
      redis.call('HSET', K[1], fState, finished)
    end
    redis.call('HSET', K[1], fCancelled, now)
    redis.call('HDEL', K[1], fCancel, fNext, F_PAUSED_AT, F_PAUSED_FROM)
    recordEvent(K[1], E_CANCELLED, now)
    return {R_FINISHED_HERE, 0}
  end
  redis.call('HSET', K[1], fCancel, now)
  return {R_ASKED, 0}
end

local lapsedBy = int(now_ms())
local retrying = redis.call('SCARD', K[7]) > 0

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
      countItemKind(e, dropStat)
    end
  end
  return n
end

local dropped, inflight = 0, 0
-- the tasks waiting for a slave that can render are dropped as queued ones
if retrying or KIND_BY_ITEM then
  dropped = dropped + counted(redis.call('LRANGE', K[10], 0, -1))
else
  dropped = dropped + redis.call('LLEN', K[10])
end
redis.call('DEL', K[10])
for i = 11, #K, 2 do
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
for _, e in ipairs(redis.call('LRANGE', K[4], 0, -1)) do
  countKind(e, dropStat, 1)
end
for _, e in ipairs(redis.call('ZRANGE', K[5], 0, -1)) do
  countKind(e, dropStat, 1)
end
writeKinds()
redis.call('DEL', K[4], K[5], K[6], K[9])
if dropped > 0 and budget then
  for field in string.gmatch(A[5], '%S+') do
    redis.call('HINCRBY', K[3], field, dropped)
  end
elseif dropped > 0 then
  redis.call('HINCRBY', K[3], cancelled, dropped)
end
if finish ~= '1' or inflight > 0 then
  return {R_DRAINING, dropped}
end
redis.call('HSET', K[1], fState, finished, fFinished, now, fCancelled, now)
redis.call('HDEL', K[1], fNext, fCancel, F_PAUSED_AT, F_PAUSED_FROM)
redis.call('DEL', K[7], K[8])
recordEvent(K[1], E_CANCELLED, now)
return {R_FINISHED_HERE, dropped}
