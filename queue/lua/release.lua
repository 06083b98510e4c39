-- Leased.Release, Leased.Requeue and SlaveQueue.Park: hand back the
-- entries after the bands' arguments (ARGV[3..], read_bands: none for
-- Park) that are still in flight in KEYS[1], to the head of list KEYS[2],
-- or of their own band (KEYS[4..]) when bands are given. With ARGV[1] =
-- '1' (Release: a graceful shutdown handing back work it never finished)
-- the delivery does not count (its start mark goes with the entry's
-- score); with '0' (Requeue: an attempt that failed, or a holder that
-- died) it counts in attempts hash KEYS[3] as count_delivery says.
-- ARGV[2] is '1' for start marks (a slave queue), '0' without (every
-- delivery counts: the master's frontier). Reply how many were handed
-- back.
local uncount, marks = ARGV[1] == '1', ARGV[2] == '1'
local bands, from = read_bands(4, 3)
local n = 0
for i = from, #ARGV do
  local entry = ARGV[i]
  local score = redis.call('ZSCORE', KEYS[1], entry)
  if score then
    redis.call('ZREM', KEYS[1], entry)
    redis.call('LPUSH', band_of(bands, entry, KEYS[2]), entry)
    if not uncount then
      count_delivery(KEYS[3], entry, marks, started(score))
    end
    n = n + 1
  end
end
return n
