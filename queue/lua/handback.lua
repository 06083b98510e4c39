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

-- A slave queue of a job whose pages have priorities is kept in bands
-- (cluster.JobKeys.Band): an entry handed back goes to the band of its
-- own priority, which its wire form gives after TASK_PRIORITY_MARKER
-- (absent for 0). read_bands reads the bands a script was given: ARGV[at]
-- is their number n, ARGV[at+1 .. at+n] their priorities, KEYS[kat ..]
-- their lists. It returns the lists by priority (empty for a list not
-- kept in bands) and where the arguments after them start.
local function read_bands(kat, at)
  local n, out = tonumber(ARGV[at]), {}
  for i = 1, n do
    out[ARGV[at + i]] = KEYS[kat + i - 1]
  end
  return out, at + n + 1
end

-- band_of is the list entry goes back to: its priority's in bands, else
-- list (a list not kept in bands, or a priority it does not have).
local function band_of(bands, entry, list)
  if next(bands) == nil then
    return list
  end
  local at = string.find(entry, TASK_PRIORITY_MARKER, 1, true)
  local p = at and string.match(entry, '^%-?%d+', at + #TASK_PRIORITY_MARKER) or '0'
  return bands[p] or list
end
