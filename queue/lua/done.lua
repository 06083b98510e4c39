-- Leased.Done: remove the entries in ARGV from in-flight set KEYS[1] and
-- forget their attempts (hash KEYS[2]); reply how many were in flight.
-- One ZREM and one HDEL per chunk of entries.
local n, CHUNK = 0, 500
for from = 1, #ARGV, CHUNK do
  local to = math.min(from + CHUNK - 1, #ARGV)
  local fields = {}
  for i = from, to do
    fields[#fields + 1] = 'n:' .. ARGV[i] -- see AttemptFields
    fields[#fields + 1] = 'e:' .. ARGV[i]
  end
  n = n + redis.call('ZREM', KEYS[1], unpack(ARGV, from, to))
  redis.call('HDEL', KEYS[2], unpack(fields))
end
return n
