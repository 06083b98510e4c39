-- Exact mode. Mode keys: the sorted set of raw 16-byte fingerprint prefixes
-- scored by expiry (unix ms). Mode args: now (ms, < 0 = server TIME),
-- window (ms), sweep limit, packed members (16 bytes each).
local function exact_ctx()
  return {key = KEYS[1], now = clock_ms(ARGV[4]), win = tonumber(ARGV[5]),
    limit = tonumber(ARGV[6]), packed = ARGV[7]}
end

local function exact_member(c, i)
  return string.sub(c.packed, (i - 1) * 16 + 1, i * 16)
end

local function exact_live(c, m)
  local s = redis.call('ZSCORE', c.key, m)
  return s and tonumber(s) > c.now
end

-- exact_sweep removes up to limit expired members, so that steady traffic
-- sweeps about as much as it adds.
local function exact_sweep(c, limit)
  local old = redis.call('ZRANGEBYSCORE', c.key, '-inf', int(c.now), 'LIMIT', 0, limit)
  if #old > 0 then
    redis.call('ZREM', c.key, unpack(old))
  end
  return #old
end

local function check_insert()
  local c = exact_ctx()
  local isNew = {}
  for i = 1, nfp do
    local m = exact_member(c, i)
    isNew[i] = not exact_live(c, m)
    if isNew[i] then
      redis.call('ZADD', c.key, int(c.now + c.win), m)
    end
  end
  if c.limit > 0 then
    exact_sweep(c, c.limit)
  end
  return isNew
end

local function contains()
  local c = exact_ctx()
  local found = {}
  for i = 1, nfp do
    found[i] = exact_live(c, exact_member(c, i))
  end
  return found
end

local function prepare()
  return 0
end

local function sweep()
  local c = exact_ctx()
  return redis.call('ZREMRANGEBYSCORE', c.key, '-inf', int(c.now))
end
