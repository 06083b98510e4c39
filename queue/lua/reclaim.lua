-- Leased.Reclaim: move at most ARGV[1] entries of in-flight set KEYS[1]
-- whose lease lapsed back to the head of list KEYS[2]; reply how many.
-- The delivery counts: a holder that died or froze with an entry is what
-- the count in attempts hash KEYS[3] (field ARGV[2]..entry, ARGV[2] being
-- cluster.AttemptCountPrefix) is for.
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms(), 'LIMIT', 0, tonumber(ARGV[1]))
for _, entry in ipairs(expired) do
  redis.call('ZREM', KEYS[1], entry)
  redis.call('LPUSH', KEYS[2], entry)
  redis.call('HINCRBY', KEYS[3], ARGV[2] .. entry, 1)
end
return #expired
