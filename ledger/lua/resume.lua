-- Ledger.Resume (client resume): a paused job goes on from where it
-- stopped. KEYS: state. ARGV: none. The state it was paused in
-- (F_PAUSED_FROM) comes back: running, pending, or finished between
-- rounds, whose next round starts at once if it came due while the job
-- was paused (the rounds due meanwhile are skipped, not made up). Fails
-- NOJOB for a job never submitted, CANCELLING for one client cancel asked
-- to stop (it stays paused until its master has stopped it: a resume
-- racing a cancel changes nothing), NOTPAUSED for one not paused. Reply
-- the state restored.
local state = redis.call('HGET', KEYS[1], F_STATE)
if not state then
  return fail('NOJOB', 'the job was never submitted')
end
if redis.call('HEXISTS', KEYS[1], F_CANCEL) == 1 then
  return fail('CANCELLING', 'client cancel asked to stop the job; its master is stopping it')
end
if state ~= S_PAUSED then
  return fail('NOTPAUSED', 'the job is ' .. state .. ', not paused')
end
local from = redis.call('HGET', KEYS[1], F_PAUSED_FROM) or S_RUNNING
redis.call('HSET', KEYS[1], F_STATE, from)
redis.call('HDEL', KEYS[1], F_PAUSED_AT, F_PAUSED_FROM)
return from
