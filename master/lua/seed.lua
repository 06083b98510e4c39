-- frontier.seed: queue the next batch of a round's seeds. K: state, seeds
-- (entries "<40 hex fingerprint> <list page>"), frontier, listseen of the
-- round. A: round, batch size.
-- Seeds are queued a batch per call so that a job of a million seeds never
-- blocks Redis; the cursor (seeded) lives in the state, so a master that
-- takes the job over carries on where the last one stopped. Each seed of
-- a list kind counts as discovered, and as a duplicate when it was queued
-- already (kinds.lua), and as skipped when past the job's page budget
-- (budget.lua; K and A end with its keys and arguments). Reply the seeds left, or R_OTHER_ROUND
-- (master.seedOtherRound) if the job is no longer at this round.
local round, batch, fRound, fSeeded = A[1], tonumber(A[2]), F_ROUND, F_SEEDED
if redis.call('HGET', K[1], fRound) ~= round then
  return R_OTHER_ROUND
end
local cursor = tonumber(redis.call('HGET', K[1], fSeeded) or '0')
local entries = redis.call('LRANGE', K[2], cursor, cursor + batch - 1)
local budget = openBudget()
for _, e in ipairs(entries) do
  local page = string.sub(e, 42)
  countKind(page, 'discovered', 1)
  if redis.call('SADD', K[4], string.sub(e, 1, 40)) == 0 then
    countKind(page, 'duplicates', 1)
  elseif listKind(page) and budget_take(budget, page) then
    countKind(page, 'skipped', 1)
  else
    redis.call('RPUSH', K[3], page)
  end
end
budget_close(budget)
writeKinds()
cursor = cursor + #entries
redis.call('HSET', K[1], fSeeded, cursor)
return math.max(0, redis.call('LLEN', K[2]) - cursor)
