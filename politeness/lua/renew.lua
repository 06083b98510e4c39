-- renew: move a live lease's deadline to now + lease ms.
-- KEYS[1] leases zset; ARGV[1] lease token, ARGV[2] lease ms
-- Fails with LOST when the lease expired and was dropped.
local now = now_ms()
local deadline = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not deadline or tonumber(deadline) <= now then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return fail('LOST', 'lease expired before it was renewed')
end
redis.call('ZADD', KEYS[1], int(now + tonumber(ARGV[2])), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], int(tonumber(last[2]) + 1000))
return now + tonumber(ARGV[2])
