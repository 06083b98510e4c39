-- NearIndex.FindOrAdd. KEYS[1..4]: the SETs of this hash's four 16-bit band
-- values. ARGV: id, the hash as 16 hex digits, ttl (ms), max distance.
-- Members are "<16 hex digits of the hash><id>". Redis Lua's bit library is
-- 32-bit, so hashes are compared as two halves.
local id, hex, ttl, maxd = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local hi, lo = tonumber(string.sub(hex, 1, 8), 16), tonumber(string.sub(hex, 9, 16), 16)

local function popcount(x)
  local n = 0
  while x ~= 0 do
    x = bit.band(x, x - 1)
    n = n + 1
  end
  return n
end

local function distance(m)
  local mhi, mlo = tonumber(string.sub(m, 1, 8), 16), tonumber(string.sub(m, 9, 16), 16)
  return popcount(bit.bxor(hi, mhi)) + popcount(bit.bxor(lo, mlo))
end

local best, bestd
for i = 1, 4 do
  for _, m in ipairs(redis.call('SMEMBERS', KEYS[i])) do
    local mid = string.sub(m, 17)
    if mid ~= id then
      local d = distance(m)
      if d <= maxd and (not best or d < bestd or (d == bestd and mid < best)) then
        best, bestd = mid, d
      end
    end
  end
end
if best then
  return {1, best}
end
for i = 1, 4 do
  redis.call('SADD', KEYS[i], hex .. id)
  redis.call('PEXPIRE', KEYS[i], ttl)
end
return {0, ''}
