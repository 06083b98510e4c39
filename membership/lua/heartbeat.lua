-- Registry.Heartbeat. KEYS: leases, info, config. ARGV: max_slaves,
-- id, token, lease ms. Renews a live lease held by token.
local other = other_max_slaves(KEYS[3], F_MAX_SLAVES, ARGV[1])
if other then
  return fail('MAXSLAVES', other)
end
local id, token = ARGV[2], ARGV[3]
local now = now_ms()
local deadline = redis.call('ZSCORE', KEYS[1], id)
if not deadline or tonumber(deadline) <= now then
  return fail('LEASELOST', 'the lease lapsed')
end
local cur = redis.call('HGET', KEYS[2], id)
if token_of(cur) ~= token then
  return fail('LEASELOST', 'held by ' .. tostring(cur))
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), id)
return 1
