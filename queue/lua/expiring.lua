-- Leased.Expiring: the entries of in-flight set KEYS[1] whose lease ends
-- within ARGV[1] ms of the server's clock.
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms() + tonumber(ARGV[1]))
