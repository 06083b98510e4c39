-- Lease: take or renew the validator's lease. Returns 1, or 0 and the
-- holder's remaining milliseconds when another validator holds it.
-- KEYS: lease. ARGV: token, ttl ms.
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then
  return {0, redis.call('PTTL', KEYS[1])}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
return {1, tonumber(ARGV[2])}
