-- frontier.queueNext: append a list page's next pages to the frontier
-- before the page itself is finished, so the next level of the walk can
-- be fetched while this page's detail links are admitted. K: frontier,
-- listseen of the round. A: fingerprint/page pairs. A page already seen
-- this round is not queued again, so a page fetched twice (its master
-- died before finishing it) queues its next pages once. Each page counts
-- as discovered, and as a duplicate when not queued (kinds.lua): a page
-- fetched twice counts its links twice, the second time as duplicates.
local queued = 0
for i = 1, #A, 2 do
  countKind(A[i + 1], 'discovered', 1)
  if redis.call('SADD', K[2], A[i]) == 1 then
    redis.call('RPUSH', K[1], A[i + 1])
    queued = queued + 1
  else
    countKind(A[i + 1], 'duplicates', 1)
  end
end
writeKinds()
return queued
