-- Registry.Deregister. KEYS: leases, info, epoch. ARGV: id, token. Removes
-- the node if token holds it and bumps the epoch; an absent node is a no-op.
local id, token = ARGV[1], ARGV[2]
local cur = redis.call('HGET', KEYS[2], id)
if not cur then
  redis.call('ZREM', KEYS[1], id)
  return 0
end
if token_of(cur) ~= token then
  return fail('LEASELOST', 'held by ' .. cur)
end
redis.call('ZREM', KEYS[1], id)
redis.call('HDEL', KEYS[2], id)
return redis.call('INCR', KEYS[3])
