-- Ledger.Ack: acknowledge tasks in flight in KEYS[1] and count their
-- outcomes in the job's stats hash KEYS[2] (fields F_STAT_...). KEYS[3] is
-- the set of fingerprints of re-enqueued failed tasks, KEYS[4] the
-- attempts hash (fields P_...). ARGV[1..2] are this slave's stored and
-- failed stats fields (cluster.SlaveStat). Then per task seven values:
-- the task; its outcome (O_STORED, O_FAILED, O_SKIPPED, and O_RETRY_STORED,
-- O_RETRY_FAILED, O_RETRY_SKIPPED for the same after client retry-failed:
-- Outcome.code); a near-duplicate flag (0/1); the retries it took; its
-- fingerprint; a dead-letter flag (0/1: failed because it was delivered
-- too often); the stats fields to add one to besides, separated by spaces
-- ('' for none): why it was skipped (e.g. skipped_not_html), what a
-- re-crawl found (e.g. changed changed@2); a field written name=N adds
-- N (the bytes fetched, bytes@2=N).
-- A task no longer in flight (its lease lapsed and it was reclaimed) is
-- not counted; nor is a retried task no longer in KEYS[3]. A retried page
-- already counts as failed: stored now, it moves from failed to stored;
-- failed again, it stays failed. The counts are summed here and written
-- once per field. Reply the number counted.
local storedSlave, failedSlave = ARGV[1], ARGV[2]
local prefixes = {P_COUNT, P_REASON, P_UNSTARTED}
local FIRST = 3 -- the first task's values
local sums, fields = {}, {}
local function count(field, n)
  if n ~= 0 then
    if not sums[field] then
      sums[field] = 0
      fields[#fields + 1] = field
    end
    sums[field] = sums[field] + n
  end
end

-- inflight[task] is true while the task is in flight and not yet counted
-- by this call: one ZMSCORE and one ZREM per chunk, not a ZREM per task.
local inflight, CHUNK = {}, 500
for from = FIRST, #ARGV, 7 * CHUNK do
  local tasks = {}
  for i = from, math.min(from + 7 * CHUNK - 1, #ARGV), 7 do
    tasks[#tasks + 1] = ARGV[i]
  end
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(tasks))
  local held = {}
  for j, task in ipairs(tasks) do
    if scores[j] and not inflight[task] then
      inflight[task] = true
      held[#held + 1] = task
    end
  end
  if #held > 0 then
    redis.call('ZREM', KEYS[1], unpack(held))
  end
end

local counted = 0
local attempts = {}
-- the attempts hash holds only tasks begun or handed back: when it is
-- empty there is nothing to forget
local failures = redis.call('EXISTS', KEYS[4]) == 1
for i = FIRST, #ARGV, 7 do
  local task, code = ARGV[i], ARGV[i + 1]
  local ok = inflight[task] == true
  inflight[task] = nil -- a task listed twice is counted once
  if ok and failures then
    for _, prefix in ipairs(prefixes) do
      attempts[#attempts + 1] = prefix .. task
    end
  end
  if ok and (code == O_RETRY_STORED or code == O_RETRY_FAILED or code == O_RETRY_SKIPPED) then
    ok = redis.call('SREM', KEYS[3], ARGV[i + 4]) == 1
  end
  if ok then
    if code == O_STORED or code == O_RETRY_STORED then
      count(F_STAT_STORED, 1)
      count(storedSlave, 1)
    elseif code == O_FAILED then
      count(F_STAT_FAILED, 1)
      count(failedSlave, 1)
    elseif code == O_SKIPPED or code == O_RETRY_SKIPPED then
      count(F_STAT_SKIPPED, 1)
    end
    for field in string.gmatch(ARGV[i + 6], '%S+') do
      local name, n = string.match(field, '^(.+)=(%d+)$') -- Outcome.Counts' Add
      if name then
        count(name, tonumber(n))
      else
        count(field, 1)
      end
    end
    if code == O_RETRY_STORED or code == O_RETRY_SKIPPED then
      count(F_STAT_FAILED, -1)
    end
    if code == O_RETRY_STORED then
      count(F_STAT_RECOVERED, 1)
    end
    if ARGV[i + 2] == '1' then
      count(F_STAT_NEAR_DUPLICATES, 1)
    end
    count(F_STAT_RETRIES, tonumber(ARGV[i + 3]))
    if ARGV[i + 5] == '1' then
      count(F_STAT_DEAD_LETTERS, 1)
    end
    counted = counted + 1
  end
end
if #attempts > 0 then
  redis.call('HDEL', KEYS[4], unpack(attempts))
end
for _, field in ipairs(fields) do
  redis.call('HINCRBY', KEYS[2], field, sums[field])
end
return counted
