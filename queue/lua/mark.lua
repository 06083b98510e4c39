-- Leased.MarkStarted: mark the entries in ARGV[2..] that are still in
-- flight in KEYS[1] as begun: field ARGV[1]..entry of attempts hash
-- KEYS[2] (ARGV[1] is cluster.AttemptStartedPrefix). A delivery that ends
-- without an outcome counts toward dead-lettering only when marked (see
-- handback.lua). Reply how many were marked.
local n = 0
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('HSET', KEYS[2], ARGV[1] .. ARGV[i], '1')
    n = n + 1
  end
end
return n
