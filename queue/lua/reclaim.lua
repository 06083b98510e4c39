-- Leased.Reclaim: move at most ARGV[1] entries of in-flight set KEYS[1]
-- whose lease lapsed back to the head of list KEYS[2] (of their own band
-- when bands are given: ARGV[3..] and KEYS[4..], read_bands); reply how
-- many. The delivery counts in attempts hash KEYS[3] as count_delivery
-- says, with start marks when ARGV[2] is '1' (a slave queue), without
-- when '0' (every delivery counts: the master's frontier).
local marks = ARGV[2] == '1'
local bands = read_bands(4, 3)
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms(), 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
for i = 1, #expired, 2 do
  local entry = expired[i]
  redis.call('ZREM', KEYS[1], entry)
  redis.call('LPUSH', band_of(bands, entry, KEYS[2]), entry)
  count_delivery(KEYS[3], entry, marks, started(expired[i + 1]))
end
return #expired / 2
