-- renew: move the deadlines of live leases of one host to now + lease ms.
-- KEYS[1] leases zset; ARGV[1] lease ms, ARGV[2..] lease tokens
-- Returns the tokens that could not be renewed: they had expired (and
-- no longer counted against the cap) and are dropped.
local now = now_ms()
local lease_ms = tonumber(ARGV[1])
local lost = {}
local renewed = false
for i = 2, #ARGV do
  local deadline = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if deadline and tonumber(deadline) > now then
    redis.call('ZADD', KEYS[1], int(now + lease_ms), ARGV[i])
    renewed = true
  else
    redis.call('ZREM', KEYS[1], ARGV[i])
    lost[#lost + 1] = ARGV[i]
  end
end
if renewed then
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', KEYS[1], int(tonumber(last[2]) + 1000))
end
return lost
