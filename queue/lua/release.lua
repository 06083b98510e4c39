-- Leased.Release and Leased.Requeue: hand back the entries in ARGV[3..]
-- that are still in flight in KEYS[1], to the head of list KEYS[2]. With
-- ARGV[1] = '1' (Release: a graceful shutdown handing back work it never
-- started) the delivery does not count; with '0' (Requeue: an attempt that
-- failed, or a holder that died) it does: the count in attempts hash
-- KEYS[3] (field ARGV[2]..entry, ARGV[2] being cluster.AttemptCountPrefix)
-- goes up. Reply how many were handed back.
local uncount, countPrefix = ARGV[1] == '1', ARGV[2]
local n = 0
for i = 3, #ARGV do
  local entry = ARGV[i]
  if redis.call('ZREM', KEYS[1], entry) == 1 then
    redis.call('LPUSH', KEYS[2], entry)
    if not uncount then
      redis.call('HINCRBY', KEYS[3], countPrefix .. entry, 1)
    end
    n = n + 1
  end
end
return n
