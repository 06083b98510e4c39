-- acquire: grant up to `want` requests to one host, at once and atomically
-- checking the pause, the concurrency cap (leases) and the rate (GCRA).
-- KEYS[1] rate hash, KEYS[2] leases zset, KEYS[3] pause (value: until, server ms)
-- ARGV[1] want, ARGV[2] interval ms between requests at full rate (float),
-- ARGV[3] burst, ARGV[4] concurrency, ARGV[5] lease ms, ARGV[6] state ttl ms,
-- ARGV[7] wait ms to suggest when the cap is full, ARGV[8] lease token prefix,
-- ARGV[9] field tat, ARGV[10] field factor
-- Returns {granted, wait_ms, now_ms, reason}. Granted leases are members
-- prefix..1 .. prefix..granted, each with deadline now + lease ms. wait_ms
-- is when asking again may grant more (0: now); reason says what held
-- back the rest: 'paused', 'rate', 'full' or ''.
local want = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local cap = tonumber(ARGV[4])
local lease_ms = tonumber(ARGV[5])
local now = now_ms()

-- Deadlines are values, not key expiries: miniredis (crawler run) expires
-- nothing by itself, so expiries only clean up.
local paused_until = tonumber(redis.call('GET', KEYS[3]) or '0') or 0
if paused_until > now then
  return {0, paused_until - now, now, 'paused'}
end

-- Lapsed leases (of a process that died) are swept only when the cap
-- looks full: the common case costs one ZCARD.
local free = cap - redis.call('ZCARD', KEYS[2])
if free < want and redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now) > 0 then
  free = cap - redis.call('ZCARD', KEYS[2])
end

local st = redis.call('HMGET', KEYS[1], ARGV[9], ARGV[10])
local factor = tonumber(st[2]) or 1
local step = interval / factor
local tat = math.max(tonumber(st[1]) or now, now)
-- GCRA: n more fit while tat + n*step - burst*step <= now.
local fits = math.floor((now - tat) / step + burst + 1e-9)

local n = math.max(math.min(want, free, fits), 0)
if n > 0 then
  tat = tat + n * step
  redis.call('HSET', KEYS[1], ARGV[9], string.format('%.3f', tat))
  redis.call('PEXPIRE', KEYS[1], int(math.ceil(tat - now) + tonumber(ARGV[6])))
  local args = {}
  for i = 1, n do
    args[#args + 1] = int(now + lease_ms)
    args[#args + 1] = ARGV[8] .. i
  end
  redis.call('ZADD', KEYS[2], unpack(args))
  -- The set outlives its leases by a second: GT only ever lengthens its
  -- life (another process may hold longer leases), and a set just created
  -- (no expiry yet, which GT counts as infinite) gets one.
  local life = int(lease_ms + 1000)
  if redis.call('PEXPIRE', KEYS[2], life, 'GT') == 0 and redis.call('PTTL', KEYS[2]) < 0 then
    redis.call('PEXPIRE', KEYS[2], life)
  end
  fits = fits - n
  free = free - n
end
if n >= want then
  return {n, 0, now, ''}
end

local wait, reason = 0, ''
if fits <= 0 then
  wait, reason = math.ceil(tat - (burst - 1) * step - now), 'rate'
end
if free <= 0 then
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  local until_free = tonumber(ARGV[7])
  if first[2] then
    until_free = math.min(until_free, tonumber(first[2]) - now)
  end
  if until_free > wait then
    wait, reason = until_free, 'full'
  end
end
return {n, math.max(wait, 1), now, reason}
