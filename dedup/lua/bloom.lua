-- Bloom mode: each slice is a blocked Bloom filter, every bit of a
-- fingerprint in one line of its block. Mode keys: the blocks of granules
-- lo..hi, granule-major (KEYS[(g - lo) * B + b + 1]). Mode args: now (ms,
-- < 0 = server TIME), lo, granularity (ms), window (ms), L, B, k, the last
-- bit of a block, the packed bits (per fingerprint, k pairs of bytes sorted
-- by byte: the byte's index in the line, from 0, and the bit's mask), then per
-- fingerprint its block (from 0) and its line's first and last byte.
-- Only GETRANGE, SETRANGE and arithmetic are used: the Lua of miniredis has
-- no struct or bit library, and one GETRANGE is cheaper than k GETBITs.

-- bloom_blockkey is the key of block b (0-based) of granule s.
local function bloom_blockkey(c, s, b)
  return KEYS[(s - c.lo) * c.B + b + 1]
end

-- bloom_create makes granule s's missing blocks at full size, expiring
-- when the granule leaves the window.
local function bloom_create(c, s)
  for b = 0, c.B - 1 do
    local key = bloom_blockkey(c, s, b)
    if redis.call('EXISTS', key) == 0 then
      redis.call('SETBIT', key, c.lastbit, 0)
      redis.call('PEXPIREAT', key, int((s + 1) * c.gran + c.win))
    end
  end
end

-- bloom_blocks is granule s's existing block keys (false where missing),
-- or nil when it has none.
local function bloom_blocks(c, s)
  local blocks, any = {}, false
  for b = 0, c.B - 1 do
    local key = bloom_blockkey(c, s, b)
    if redis.call('EXISTS', key) == 1 then
      blocks[b + 1], any = key, true
    else
      blocks[b + 1] = false
    end
  end
  return any and blocks or nil
end

-- bloom_ctx reads the arguments; live lists the existing slices from the
-- current granule back (the current one first, if it exists).
local function bloom_ctx(create)
  local now = now_ms(ARGV[4])
  local lo, gran, win = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
  local L, B, k = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
  local g = math.floor(now / gran)
  if g - L < lo or g + 1 > lo + nmk / B - 1 then
    return error('DEDUPCLOCK granule ' .. int(g) .. ' is outside the keys passed')
  end
  local c = {g = g, lo = lo, gran = gran, win = win, B = B, k = k, lastbit = ARGV[11],
    packed = ARGV[12], live = {}}
  if create then
    bloom_create(c, g)
  end
  for s = g, g - L, -1 do
    c.live[#c.live + 1] = bloom_blocks(c, s)
  end
  return c
end

-- bloom_has reports whether line holds all of the fingerprint's bits; v is
-- its pairs of (byte index from 0, mask).
local function bloom_has(line, v, k)
  for j = 1, 2 * k, 2 do
    local m = v[j + 1]
    if string.byte(line, v[j] + 1) % (m + m) < m then
      return false
    end
  end
  return true
end

-- bloom_set writes line back into key at from, with the fingerprint's bits
-- set. Rebuilding the line through a table measured faster than splicing
-- it around the changed bytes; either way, making Lua strings is most of
-- the cost of an insert.
local function bloom_set(key, from, line, v, k)
  local t = {string.byte(line, 1, -1)}
  for j = 1, 2 * k, 2 do
    local i, m = v[j] + 1, v[j + 1]
    if t[i] % (m + m) < m then
      t[i] = t[i] + m
    end
  end
  redis.call('SETRANGE', key, from, string.char(unpack(t)))
end

-- bloom_each calls fn(i, block, from, to, v) for every fingerprint.
local function bloom_each(c, fn)
  local a, w = 13, 2 * c.k
  for i = 1, nfp do
    local v = {string.byte(c.packed, (i - 1) * w + 1, i * w)}
    fn(i, tonumber(ARGV[a]) + 1, ARGV[a + 1], ARGV[a + 2], v)
    a = a + 3
  end
end

-- bloom_found reports whether any live slice from the first'th on holds
-- the fingerprint.
local function bloom_found(c, first, b, from, to, v)
  for s = first, #c.live do
    local key = c.live[s][b]
    if key and bloom_has(redis.call('GETRANGE', key, from, to), v, c.k) then
      return true
    end
  end
  return false
end

local function check_insert()
  local c = bloom_ctx(true)
  local isNew = {}
  bloom_each(c, function(i, b, from, to, v)
    local key = bloom_blockkey(c, c.g, b - 1)
    local line = redis.call('GETRANGE', key, from, to)
    isNew[i] = not bloom_has(line, v, c.k) and not bloom_found(c, 2, b, from, to, v)
    if isNew[i] then
      bloom_set(key, from, line, v, c.k)
    end
  end)
  return isNew
end

local function contains()
  local c = bloom_ctx(false)
  local found = {}
  bloom_each(c, function(i, b, from, to, v)
    found[i] = bloom_found(c, 1, b, from, to, v)
  end)
  return found
end

local function prepare()
  local c = bloom_ctx(true)
  bloom_create(c, c.g + 1)
  return 0
end

local function sweep()
  return 0
end
