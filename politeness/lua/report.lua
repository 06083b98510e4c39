-- report: requests to the host ended, or the host spoke. Any of: give
-- leases back, adjust the rate factor, pause the host. One call carries
-- every report a process gathered for the host (Reporter), or one (Lease).
-- KEYS[1] rate hash, KEYS[2] leases zset, KEYS[3] pause (value: till, server ms)
-- ARGV[1] n, the number of lease tokens, then the n tokens; then, from
-- a = n + 2: ARGV[a] cuts (answers 429 or 503), ARGV[a+1] raises (other
-- answers below 500), ARGV[a+2] pause ms (0 for none), ARGV[a+3] cut
-- multiplier, ARGV[a+4] raise step, ARGV[a+5] min factor, ARGV[a+6] ms
-- between two cuts, ARGV[a+7] state ttl ms, ARGV[a+8] field factor,
-- ARGV[a+9] field cut_at.
-- Returns the factor after the report, as a string.
local now = now_ms()
local n = tonumber(ARGV[1])
if n > 0 then
  redis.call('ZREM', KEYS[2], unpack(ARGV, 2, n + 1))
end
local a = n + 2
local cuts, raises, pause = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
local fFactor, fCutAt = ARGV[a + 8], ARGV[a + 9]

if pause > 0 then
  local till = tonumber(redis.call('GET', KEYS[3]) or '0') or 0
  if now + pause > till then
    redis.call('SET', KEYS[3], int(now + pause), 'PX', int(pause))
  end
end

if cuts == 0 and raises == 0 then
  return ''
end
local st = redis.call('HMGET', KEYS[1], fFactor, fCutAt)
local factor = tonumber(st[1]) or 1
local cut_at = tonumber(st[2]) or 0
local changed = false
if cuts > 0 and now - cut_at >= tonumber(ARGV[a + 6]) then
  factor = math.max(factor * tonumber(ARGV[a + 3]), tonumber(ARGV[a + 5]))
  redis.call('HSET', KEYS[1], fCutAt, int(now))
  changed = true
elseif cuts == 0 and factor < 1 then
  factor = math.min(factor + raises * tonumber(ARGV[a + 4]), 1)
  changed = true
end
if changed then
  redis.call('HSET', KEYS[1], fFactor, string.format('%.6f', factor))
  local ttl = redis.call('PTTL', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], int(math.max(ttl, tonumber(ARGV[a + 7]))))
end
return string.format('%.6f', factor)
