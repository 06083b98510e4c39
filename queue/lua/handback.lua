-- Shared by reclaim, release and move: how a delivery that ended without
-- an outcome is counted in attempts hash `attempts`. Without start marks
-- (`marks` false, the master's frontier) every such delivery counts
-- (field P_COUNT..entry). With them (the slave queues) it counts only if
-- the entry's fetch had begun (field P_STARTED..entry, set by
-- Leased.MarkStarted): a page that crashes or hangs its fetcher comes back
-- counted, and is dead-lettered in the end. One whose holder died, froze
-- or lost Redis before the fetch began is not the page's fault: it is
-- counted apart (field P_UNSTARTED..entry) and never dead-letters it.
local function count_delivery(attempts, entry, marks)
  if not marks or redis.call('HDEL', attempts, P_STARTED .. entry) == 1 then
    redis.call('HINCRBY', attempts, P_COUNT .. entry, 1)
  else
    redis.call('HINCRBY', attempts, P_UNSTARTED .. entry, 1)
  end
end

-- forget_start drops entry's start mark: handed back uncounted, its next
-- delivery starts afresh.
local function forget_start(attempts, entry, marks)
  if marks then
    redis.call('HDEL', attempts, P_STARTED .. entry)
  end
end
