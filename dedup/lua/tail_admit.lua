-- Admit: check and insert, then enqueue the new candidates, count, and
-- record the once-guard, all in this one script.
-- Tail keys after the mode keys: Stats (if any), OnceKey (if any), then the
-- distinct queue keys. Tail args: NewField, DupField, OnceMember, hasStats,
-- hasOnce, then per candidate: queue index (0 = none, else 1-based among
-- the queue keys), payload, counter field ('' = none).
local newField, dupField, onceMember = ARGV[tail], ARGV[tail + 1], ARGV[tail + 2]
local kpos = nmk + 1
local statsKey, onceKey
if ARGV[tail + 3] == '1' then
  statsKey, kpos = KEYS[kpos], kpos + 1
end
if ARGV[tail + 4] == '1' then
  onceKey, kpos = KEYS[kpos], kpos + 1
  if redis.call('SISMEMBER', onceKey, onceMember) == 1 then
    return {1, ''}
  end
end

local isNew = check_insert()
local queued, nnew = {}, 0
for i = 1, nfp do
  local a = tail + 5 + (i - 1) * 3
  if isNew[i] then
    nnew = nnew + 1
    local q = tonumber(ARGV[a])
    if q > 0 then
      queued[q] = queued[q] or {}
      table.insert(queued[q], ARGV[a + 1])
    end
    if statsKey and ARGV[a + 2] ~= '' then
      redis.call('HINCRBY', statsKey, ARGV[a + 2], 1)
    end
  end
end

for q, payloads in pairs(queued) do
  for i = 1, #payloads, 1000 do
    redis.call('RPUSH', KEYS[kpos + q - 1], unpack(payloads, i, math.min(i + 999, #payloads)))
  end
end
if statsKey and newField ~= '' and nnew > 0 then
  redis.call('HINCRBY', statsKey, newField, nnew)
end
if statsKey and dupField ~= '' and nfp - nnew > 0 then
  redis.call('HINCRBY', statsKey, dupField, nfp - nnew)
end
if onceKey then
  redis.call('SADD', onceKey, onceMember)
end
return {0, flags(isNew, nfp)}
