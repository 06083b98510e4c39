-- Leased.Renew: extend to now + ARGV[1] ms the lease of the entries in
-- ARGV[2..] that are still in flight in KEYS[1]; reply how many. One ZADD
-- per chunk of entries, not one per entry: a slave renews every task it
-- holds, parked ones included, every few seconds.
local deadline = int(now_ms() + tonumber(ARGV[1]))
local n, CHUNK = 0, 500
for from = 2, #ARGV, CHUNK do
  local args = {}
  for i = from, math.min(from + CHUNK - 1, #ARGV) do
    args[#args + 1] = deadline
    args[#args + 1] = ARGV[i]
  end
  n = n + redis.call('ZADD', KEYS[1], 'XX', 'CH', unpack(args))
end
return n
