-- Leased.MarkStarted: mark the entries in ARGV that are still in flight
-- in KEYS[1] as begun: field P_STARTED..entry of attempts hash KEYS[2]. A
-- delivery that ends without an outcome counts toward dead-lettering only
-- when marked (see handback.lua). One ZMSCORE and one HSET per chunk of
-- entries, not one of each per entry. Reply how many were marked.
local n, CHUNK = 0, 500
for from = 1, #ARGV, CHUNK do
  local entries = {}
  for i = from, math.min(from + CHUNK - 1, #ARGV) do
    entries[#entries + 1] = ARGV[i]
  end
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(entries))
  local fields = {}
  for i, e in ipairs(entries) do
    if scores[i] then
      fields[#fields + 1] = P_STARTED .. e
      fields[#fields + 1] = '1'
      n = n + 1
    end
  end
  if #fields > 0 then
    redis.call('HSET', KEYS[2], unpack(fields))
  end
end
return n
