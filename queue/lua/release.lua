-- Leased.Release and Leased.Requeue: hand back the entries in ARGV[5..]
-- that are still in flight in KEYS[1], to the head of list KEYS[2]. With
-- ARGV[1] = '1' (Release: a graceful shutdown handing back work it never
-- finished) the delivery does not count; with '0' (Requeue: an attempt
-- that failed, or a holder that died) it counts in attempts hash KEYS[3]
-- as count_delivery says: ARGV[2..4] are the count, started and unstarted
-- field prefixes (cluster.AttemptCountPrefix, ...; started '' to count
-- every delivery). Reply how many were handed back.
local uncount, count, started, unstarted = ARGV[1] == '1', ARGV[2], ARGV[3], ARGV[4]
local n = 0
for i = 5, #ARGV do
  local entry = ARGV[i]
  if redis.call('ZREM', KEYS[1], entry) == 1 then
    redis.call('LPUSH', KEYS[2], entry)
    if uncount then
      forget_start(KEYS[3], entry, started)
    else
      count_delivery(KEYS[3], entry, count, started, unstarted)
    end
    n = n + 1
  end
end
return n
