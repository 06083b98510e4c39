-- frontier.commit: a master's commit of a list page, fenced: finish it
-- and count what it found. K: pages in progress, frontier,
-- listseen of the round, stats, attempts. A: the page, n, then n
-- counter/increment pairs, then the page's two attempt fields, then
-- fingerprint/page pairs of the next pages. It removes the page from the
-- pages in progress or, if its lease lapsed and it was put back, from the
-- frontier; appends the next list pages not yet seen this round; and, if
-- this call removed the page, adds its counters to the stats, so a page
-- fetched twice counts once.
local page, n = A[1], tonumber(A[2])
local removed = redis.call('ZREM', K[1], page) + redis.call('LREM', K[2], 1, page)
local nextAt = 3 + 2 * n
redis.call('HDEL', K[5], A[nextAt], A[nextAt + 1])
for i = nextAt + 2, #A, 2 do
  if redis.call('SADD', K[3], A[i]) == 1 then
    redis.call('RPUSH', K[2], A[i + 1])
  end
end
if removed > 0 then
  for i = 3, 2 + 2 * n, 2 do
    redis.call('HINCRBY', K[4], A[i], A[i + 1])
  end
end
return removed
