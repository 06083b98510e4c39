-- client.Cancel: ask the job's master to stop it. KEYS: state, owner.
-- ARGV: now.
-- A pending job that no master holds (none runs, or none under this
-- prefix) is finished here at once: nobody is there to do it, and it has
-- queued nothing yet. A recurring job between rounds (finished, with a
-- next_round_at) is cancelled too: its master is asked (it then ends the
-- job without starting another round, and stops a round it started
-- meanwhile), or with no master holding it, its next round is dropped
-- here. Reply R_NO_JOB for no such job, R_FINISHED_ALREADY if it is
-- finished already (and runs no more rounds), R_ASKED if its master was
-- asked, R_FINISHED_HERE if it was finished here (client.cancelNoJob, ...).
local fState, fCancel, fFinished, fCancelled, fNext = F_STATE, F_CANCEL, F_FINISHED_AT, F_CANCELLED_AT, F_NEXT_ROUND_AT
local finished, pending, now = S_FINISHED, S_PENDING, ARGV[1]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return R_NO_JOB
end
local state = redis.call('HGET', KEYS[1], fState)
if state == finished then
  if redis.call('HEXISTS', KEYS[1], fNext) == 0 then
    return R_FINISHED_ALREADY
  end
  if redis.call('EXISTS', KEYS[2]) == 0 then
    redis.call('HSET', KEYS[1], fCancelled, now)
    redis.call('HDEL', KEYS[1], fCancel, fNext)
    return R_FINISHED_HERE
  end
end
if state == pending and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('HSET', KEYS[1], fState, finished, fFinished, now, fCancelled, now)
  redis.call('HDEL', KEYS[1], fCancel, fNext)
  return R_FINISHED_HERE
end
redis.call('HSET', KEYS[1], fCancel, now)
return R_ASKED
