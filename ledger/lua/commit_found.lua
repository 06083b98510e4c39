-- frontier.commitFound: a master's commit of Found entries, fenced:
-- finish a take of them at once. K: entries
-- in progress, the Found list, stats, attempts. A: n, then per entry: the
-- entry, its two attempt fields, m, and m counter/increment pairs. Each
-- entry is removed from the entries in progress or, if its lease lapsed
-- and it was put back, from the list; the counters of the entries this
-- call removed are added to the stats (one HINCRBY per field), so an entry
-- routed twice counts once. Reply: how many entries it removed.
local n, at = tonumber(A[1]), 2
local sums, fields, removed = {}, {}, 0
for _ = 1, n do
  local entry, m = A[at], tonumber(A[at + 3])
  local gone = redis.call('ZREM', K[1], entry) + redis.call('LREM', K[2], 1, entry)
  redis.call('HDEL', K[4], A[at + 1], A[at + 2])
  if gone > 0 then
    removed = removed + 1
    for i = at + 4, at + 3 + 2 * m, 2 do
      local field = A[i]
      if not sums[field] then
        sums[field] = 0
        fields[#fields + 1] = field
      end
      sums[field] = sums[field] + tonumber(A[i + 1])
    end
  end
  at = at + 4 + 2 * m
end
for _, field in ipairs(fields) do
  redis.call('HINCRBY', K[3], field, sums[field])
end
return removed
