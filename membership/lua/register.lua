-- Registry.Register. KEYS: leases, info, epoch, config. ARGV: max_slaves,
-- id, token, info JSON, lease ms, and the token of a
-- registration this one may replace although its lease lives ('' for
-- none: a slave restarted on the same host after its process died). It
-- refuses an ID held live by another token, replying IDTAKEN with the
-- holder's info and its lease deadline; it bumps the epoch unless the same
-- run re-registers unchanged.
local other = other_max_slaves(KEYS[4], F_MAX_SLAVES, ARGV[1])
if other then
  return fail('MAXSLAVES', other)
end
local id, token, info, lease, replace = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6]
local now = now_ms()
local deadline = redis.call('ZSCORE', KEYS[1], id)
local live = deadline and tonumber(deadline) > now
local cur = redis.call('HGET', KEYS[2], id)
local holder = token_of(cur)
if live and holder and holder ~= token and holder ~= replace then
  return fail('IDTAKEN', int(deadline) .. ' ' .. cur)
end
redis.call('ZADD', KEYS[1], now + lease, id)
redis.call('HSET', KEYS[2], id, info)
if live and cur == info then
  return tonumber(redis.call('GET', KEYS[3]) or '0')
end
return redis.call('INCR', KEYS[3])
