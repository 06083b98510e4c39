-- Leased.Renew: extend to now + ARGV[1] ms the lease of the entries in
-- ARGV[2..] that are still in flight in KEYS[1]; reply how many.
local deadline = now_ms() + tonumber(ARGV[1])
local n = 0
for i = 2, #ARGV do
  n = n + redis.call('ZADD', KEYS[1], 'XX', 'CH', deadline, ARGV[i])
end
return n
