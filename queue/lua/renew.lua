-- Leased.Renew: extend to now + ARGV[1] ms the lease of the entries in
-- ARGV[2..] that are still in flight in KEYS[1], keeping their start
-- marks (handback.lua); reply how many. One ZMSCORE and one ZADD per chunk
-- of entries, not one of each per entry.
local deadline = math.floor(now_ms() + tonumber(ARGV[1]))
local n, CHUNK = 0, 500
for from = 2, #ARGV, CHUNK do
  local entries = {}
  for i = from, math.min(from + CHUNK - 1, #ARGV) do
    entries[#entries + 1] = ARGV[i]
  end
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(entries))
  local args = {}
  for i, e in ipairs(entries) do
    if scores[i] then
      args[#args + 1] = deadline_score(deadline, started(scores[i]))
      args[#args + 1] = e
      n = n + 1
    end
  end
  if #args > 0 then
    redis.call('ZADD', KEYS[1], 'XX', unpack(args))
  end
end
return n
