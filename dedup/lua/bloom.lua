-- Bloom mode. Mode keys: the blocks of granules lo..hi, granule-major
-- (KEYS[(g - lo) * B + b + 1]). Mode args: now (ms, < 0 = server TIME), lo,
-- granularity (ms), window (ms), L, B, k, bits per block, and the packed
-- positions: per fingerprint, k + 1 big-endian uint32 (block, then k bits).
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
      redis.call('SETBIT', key, int(c.mb - 1), 0)
      redis.call('PEXPIREAT', key, int((s + 1) * c.gran + c.win))
    end
  end
end

-- bloom_live appends granule s's existing blocks (false where missing).
local function bloom_live(c, s)
  local blocks, any = {}, false
  for b = 0, c.B - 1 do
    local key = bloom_blockkey(c, s, b)
    if redis.call('EXISTS', key) == 1 then
      blocks[b + 1], any = key, true
    else
      blocks[b + 1] = false
    end
  end
  if any then
    c.live[#c.live + 1] = blocks
  end
end

local function bloom_ctx(create)
  local now = now_ms(ARGV[4])
  local lo, gran, win = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
  local L, B, k, mb = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
  local g = math.floor(now / gran)
  if g - L < lo or g + 1 > lo + nmk / B - 1 then
    return error('DEDUPCLOCK granule ' .. int(g) .. ' is outside the keys passed')
  end
  local c = {g = g, lo = lo, gran = gran, win = win, B = B, k = k, mb = mb,
    packed = ARGV[12], live = {}}
  if create then
    bloom_create(c, g)
  end
  for s = g, g - L, -1 do
    bloom_live(c, s)
  end
  return c
end

local function bloom_has(key, v, k)
  for j = 2, k + 1 do
    if redis.call('GETBIT', key, v[j]) == 0 then
      return false
    end
  end
  return true
end

local function bloom_seen(c, v)
  local b = v[1] + 1
  for _, blocks in ipairs(c.live) do
    local key = blocks[b]
    if key and bloom_has(key, v, c.k) then
      return true
    end
  end
  return false
end

-- bloom_set sets a fingerprint's k bits with SETBIT: miniredis has no
-- BITFIELD.
local function bloom_set(c, key, v)
  for j = 2, c.k + 1 do
    redis.call('SETBIT', key, v[j], 1)
  end
end

-- bloom_each calls fn with each fingerprint's k + 1 uint32s, decoded by
-- arithmetic: the Lua of miniredis has no struct library.
local function bloom_each(c, fn)
  local pos, s = 1, c.packed
  for i = 1, nfp do
    local v = {}
    for j = 1, c.k + 1 do
      local a, b, x, y = string.byte(s, pos, pos + 3)
      v[j], pos = ((a * 256 + b) * 256 + x) * 256 + y, pos + 4
    end
    fn(i, v)
  end
end

local function check_insert()
  local c = bloom_ctx(true)
  local isNew = {}
  bloom_each(c, function(i, v)
    if bloom_seen(c, v) then
      isNew[i] = false
      return
    end
    isNew[i] = true
    bloom_set(c, bloom_blockkey(c, c.g, v[1]), v)
  end)
  return isNew
end

local function contains()
  local c = bloom_ctx(false)
  local found = {}
  bloom_each(c, function(i, v)
    found[i] = bloom_seen(c, v)
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
