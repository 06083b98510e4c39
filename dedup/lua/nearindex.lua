-- NearIndex.FindOrAdd. KEYS[1..4]: the SETs of this hash's four 16-bit band
-- values. ARGV: id, the hash as 16 hex digits, ttl (ms), max distance.
-- Members are "<16 hex digits of the hash><id>". The Lua of miniredis has
-- no bit library, so hashes are compared hex digit by hex digit, counting
-- differing bits by arithmetic.
local id, hex, ttl, maxd = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

-- distance is the Hamming distance between hex and m's hash, or something
-- above maxd once it is known to be.
local function distance(m)
  local d = 0
  for i = 1, 16 do
    if string.byte(hex, i) ~= string.byte(m, i) then
      local a, b = tonumber(string.sub(hex, i, i), 16), tonumber(string.sub(m, i, i), 16)
      for _ = 1, 4 do
        if a % 2 ~= b % 2 then
          d = d + 1
        end
        a, b = math.floor(a / 2), math.floor(b / 2)
      end
      if d > maxd then
        return d
      end
    end
  end
  return d
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
