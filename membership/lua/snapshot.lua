-- Registry.Snapshot. KEYS: leases, info, epoch, config. ARGV: max_slaves.
-- Drops lapsed leases (bumping the epoch if any) and
-- replies {epoch, ids, infos}.
local other = other_max_slaves(KEYS[4], F_MAX_SLAVES, ARGV[1])
if other then
  return fail('MAXSLAVES', other)
end
local now = now_ms()
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if #gone > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  redis.call('HDEL', KEYS[2], unpack(gone))
  redis.call('INCR', KEYS[3])
end
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
local infos = {}
if #ids > 0 then
  infos = redis.call('HMGET', KEYS[2], unpack(ids))
end
return {tonumber(redis.call('GET', KEYS[3]) or '0'), ids, infos}
