-- store: keep a fetched robots.txt for the cluster and give up the lease.
-- KEYS[1] file hash, KEYS[2] fetch lease (value: token@deadline_ms)
-- ARGV[1] lease token, ARGV[2] ttl ms, ARGV[3] status, ARGV[4] body
-- Returns the fetch time (server clock, ms).
local now = now_ms()
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], F_STATUS, ARGV[3], F_BODY, ARGV[4],
  F_FETCHED_AT, int(now), F_EXPIRES_AT, int(now + ttl))
redis.call('PEXPIRE', KEYS[1], int(ttl))
local lease = redis.call('GET', KEYS[2])
if lease and string.sub(lease, 1, #ARGV[1] + 1) == ARGV[1] .. '@' then
  redis.call('DEL', KEYS[2])
end
return now
