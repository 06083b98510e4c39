-- Shared by the scripts that mark, renew and hand back entries of an
-- in-flight set. An entry's score there is its lease deadline, whole
-- milliseconds; a slave queue marks an entry whose fetch has begun
-- (Leased.MarkStarted) by taking STARTED (a half millisecond) off it, so
-- the mark lives and goes with the entry and costs no hash field (and the
-- lease still lapses at its deadline, not after it).
local STARTED = 0.5

-- started reports whether score (as ZSCORE or ZMSCORE replies it) marks a
-- begun fetch.
local function started(score)
  local s = tonumber(score)
  return s ~= nil and s ~= math.floor(s)
end

-- deadline_score is the score of a lease ending at deadline (whole ms),
-- kept marked if it was.
local function deadline_score(deadline, marked)
  if marked then
    return string.format('%.1f', deadline - STARTED)
  end
  return int(deadline)
end

-- count_delivery counts, in attempts hash `attempts`, a delivery that
-- ended without an outcome. Without start marks (`marks` false, the
-- master's frontier) every such delivery counts (field P_COUNT..entry).
-- With them (the slave queues) it counts only if the entry's fetch had
-- begun (`begun`): a page that crashes or hangs its fetcher comes back
-- counted, and is dead-lettered in the end. One whose holder died, froze
-- or lost Redis before the fetch began is not the page's fault: it is
-- counted apart (field P_UNSTARTED..entry) and never dead-letters it.
local function count_delivery(attempts, entry, marks, begun)
  if not marks or begun then
    redis.call('HINCRBY', attempts, P_COUNT .. entry, 1)
  else
    redis.call('HINCRBY', attempts, P_UNSTARTED .. entry, 1)
  end
end
