-- Admit: the job ledger's admission, the tail of dedup's Filter.Admit
-- after its check and insert: enqueue the new candidates, count them (NewField, the
-- job's routed) and the others (DupField, its duplicates), and record the
-- once-guard, all in the one script of the check.
-- Tail keys after the mode keys: Stats (if any), OnceKey (if any), the
-- job's state and budget hash (if it has a budget: budget.lua), then the
-- distinct queue keys. Tail args: NewField, DupField (each '' or one
-- field or several, space-separated), OnceMember (or
-- several, one a line: if any is recorded, nothing changes), hasStats,
-- hasOnce, the duplicates the caller found in its own copies of the slices
-- (not passed as candidates), hasBudget, max_pages, max_pages_per_host,
-- SkipField (the fields that count a new link the budget refuses: it is
-- routed, and skipped), then per candidate passed: queue index (0 =
-- none, else 1-based among the queue keys), payload, counter field ('' =
-- none). Reply: {1, '', -1} when the once-guard was recorded before, else
-- {0, a flag per candidate passed, the granule, a flag per queue key: 1
-- where the pushes found the queue empty}.
local newField, dupField, onceMember = ARGV[tail], ARGV[tail + 1], ARGV[tail + 2]
local resolved = tonumber(ARGV[tail + 5])
local kpos = nmk + 1
local statsKey, onceKey
if ARGV[tail + 3] == '1' then
  statsKey, kpos = KEYS[kpos], kpos + 1
end
if ARGV[tail + 4] == '1' then
  onceKey, kpos = KEYS[kpos], kpos + 1
  for member in string.gmatch(onceMember, '[^\n]+') do
    if redis.call('SISMEMBER', onceKey, member) == 1 then
      return {1, '', -1}
    end
  end
end
local budget
if ARGV[tail + 6] == '1' then
  budget = budget_open(KEYS[kpos], KEYS[kpos + 1], statsKey, '1', ARGV[tail + 7], ARGV[tail + 8])
  kpos = kpos + 2
end
local skipField = ARGV[tail + 9]

local isNew, err = check_insert()
if err then
  return err
end
local queued, counts, nnew = {}, {}, 0
for i = 1, nfp do
  local a = tail + 10 + (i - 1) * 3
  if isNew[i] then
    nnew = nnew + 1
  end
  if isNew[i] and budget_take(budget, ARGV[a + 1]) == nil then
    local q = tonumber(ARGV[a])
    if q > 0 then
      queued[q] = queued[q] or {}
      table.insert(queued[q], ARGV[a + 1])
    end
    local field = ARGV[a + 2]
    if field ~= '' then
      counts[field] = (counts[field] or 0) + 1
    end
  end
end
-- one HINCRBY per counter field, not one per candidate
if statsKey then
  for field, n in pairs(counts) do
    redis.call('HINCRBY', statsKey, field, n)
  end
end

-- started has a letter per queue key: '1' where this call's pushes found
-- the queue empty (its consumer may be idle, waiting to be told), else '0'
local started = {}
for q = 1, #KEYS - kpos + 1 do
  started[q] = '0'
end
for q, payloads in pairs(queued) do
  for i = 1, #payloads, 1000 do
    local to = math.min(i + 999, #payloads)
    local len = redis.call('RPUSH', KEYS[kpos + q - 1], unpack(payloads, i, to))
    if i == 1 and len == to then
      started[q] = '1'
    end
  end
end
local ndup = nfp - nnew + resolved
if statsKey and nnew > 0 then
  for field in string.gmatch(newField, '%S+') do
    redis.call('HINCRBY', statsKey, field, nnew)
  end
end
local refused = budget_close(budget)
if statsKey and refused > 0 then
  for field in string.gmatch(skipField, '%S+') do
    redis.call('HINCRBY', statsKey, field, refused)
  end
end
if statsKey and ndup > 0 then
  for field in string.gmatch(dupField, '%S+') do
    redis.call('HINCRBY', statsKey, field, ndup)
  end
end
if onceKey then
  for member in string.gmatch(onceMember, '[^\n]+') do
    redis.call('SADD', onceKey, member)
  end
end
return {0, flags(isNew, nfp), granule, table.concat(started)}
