-- Shared by reclaim, release and move: how a delivery that ended without
-- an outcome is counted in attempts hash `attempts`. Without start marks
-- (`started` is '', the master's frontier) every such delivery counts
-- (field count..entry). With them (the slave queues) it counts only if
-- the entry's fetch had begun (field started..entry, set by
-- Leased.MarkStarted): a page that crashes or hangs its fetcher comes back
-- counted, and is dead-lettered in the end. One whose holder died, froze
-- or lost Redis before the fetch began is not the page's fault: it is
-- counted apart (field unstarted..entry) and never dead-letters it.
local function count_delivery(attempts, entry, count, started, unstarted)
  if started == '' or redis.call('HDEL', attempts, started .. entry) == 1 then
    redis.call('HINCRBY', attempts, count .. entry, 1)
  else
    redis.call('HINCRBY', attempts, unstarted .. entry, 1)
  end
end

-- forget_start drops entry's start mark: handed back uncounted, its next
-- delivery starts afresh.
local function forget_start(attempts, entry, started)
  if started ~= '' then
    redis.call('HDEL', attempts, started .. entry)
  end
end
