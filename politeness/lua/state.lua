-- state: what the budget of one host looks like now.
-- KEYS[1] rate hash, KEYS[2] leases zset, KEYS[3] pause
-- ARGV[1] field factor
-- Returns {in_flight, factor, pause_ms}.
local now = now_ms()
local live = redis.call('ZCOUNT', KEYS[2], '(' .. int(now), '+inf')
local factor = redis.call('HGET', KEYS[1], ARGV[1]) or '1'
local till = tonumber(redis.call('GET', KEYS[3]) or '0') or 0
return {live, factor, math.max(till - now, 0)}
