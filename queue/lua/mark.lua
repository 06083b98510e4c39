-- Leased.MarkStarted: mark the entries in ARGV that are still in flight
-- in KEYS[1] as begun: their score loses STARTED (handback.lua). A
-- delivery that ends without an outcome counts toward dead-lettering only
-- when marked. One ZMSCORE and one ZADD per chunk of entries, not one of
-- each per entry. Reply how many are marked (those already marked too).
local n, CHUNK = 0, 500
for from = 1, #ARGV, CHUNK do
  local entries = {}
  for i = from, math.min(from + CHUNK - 1, #ARGV) do
    entries[#entries + 1] = ARGV[i]
  end
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(entries))
  local args = {}
  for i, e in ipairs(entries) do
    local s = scores[i]
    if s then
      if not started(s) then
        args[#args + 1] = deadline_score(tonumber(s), true)
        args[#args + 1] = e
      end
      n = n + 1
    end
  end
  if #args > 0 then
    redis.call('ZADD', KEYS[1], 'XX', unpack(args))
  end
end
return n
