-- Leased.Orphans: when in-flight set KEYS[1] holds more than ARGV[2]
-- entries (those its holder knows it holds), the entries whose lease ends
-- within ARGV[1] ms of the server's clock; else none, for one ZCARD.
if redis.call('ZCARD', KEYS[1]) <= tonumber(ARGV[2]) then
  return {}
end
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms() + tonumber(ARGV[1]))
