-- probe: the server's clock, ms (fractional), for a process whose recent
-- round trips were all slow to read the clock its bookings are made on
-- within a tighter error (serverClock). KEYS[1] is a key of the shard, so
-- that a Redis Cluster answers from the shard's own server.
local t = redis.call('TIME')
return string.format('%.3f', tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000)
