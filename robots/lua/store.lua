-- store: keep a fetched robots.txt for the cluster and give up the lease.
-- KEYS[1] file hash, KEYS[2] fetch lease (value: token@deadline_ms)
-- ARGV[1] lease token, ARGV[2] ttl ms, ARGV[3] status, ARGV[4] body,
-- ARGV[5..8] field names: status, body, fetched_at, expires_at
-- Returns the fetch time (server clock, ms).
local now = now_ms()
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], ARGV[5], ARGV[3], ARGV[6], ARGV[4],
  ARGV[7], int(now), ARGV[8], int(now + ttl))
redis.call('PEXPIRE', KEYS[1], int(ttl))
local lease = redis.call('GET', KEYS[2])
if lease and string.sub(lease, 1, #ARGV[1] + 1) == ARGV[1] .. '@' then
  redis.call('DEL', KEYS[2])
end
return now
