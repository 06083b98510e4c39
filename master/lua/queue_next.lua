-- frontier.queueNext: append a list page's next pages to the frontier
-- before the page itself is finished, so the next level of the walk can
-- be fetched while this page's detail links are admitted. K: frontier,
-- listseen of the round. A: fingerprint/page pairs. A page already seen
-- this round is not queued again, so a page fetched twice (its master
-- died before finishing it) queues its next pages once. Each page counts
-- as discovered, and as a duplicate when not queued (kinds.lua): a page
-- fetched twice counts its links twice, the second time as duplicates.
-- K and A end with the budget's (budget.lua: openBudget in kinds.lua).
-- A list page past the job's page budget (budget.lua, opened with the
-- arguments kinds.lua takes) is not queued: it counts as skipped.
local budget = openBudget()
local queued = 0
for i = 1, #A, 2 do
  countKind(A[i + 1], 'discovered', 1)
  if redis.call('SADD', K[2], A[i]) == 0 then
    countKind(A[i + 1], 'duplicates', 1)
  elseif listKind(A[i + 1]) and budget_take(budget, A[i + 1]) then
    countKind(A[i + 1], 'skipped', 1)
  else
    redis.call('RPUSH', K[1], A[i + 1])
    queued = queued + 1
  end
end
budget_close(budget)
writeKinds()
return queued
