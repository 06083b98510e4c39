-- Leased.Done: remove the entries in ARGV from in-flight set KEYS[1] and
-- forget their attempts (hash KEYS[2], fields P_COUNT..entry and
-- P_REASON..entry: see AttemptFields); reply how many were in flight. One
-- ZREM and one HDEL per chunk of entries.
local failures = redis.call('EXISTS', KEYS[2]) == 1 -- else nothing to forget
local n, CHUNK = 0, 500
for from = 1, #ARGV, CHUNK do
  local to = math.min(from + CHUNK - 1, #ARGV)
  n = n + redis.call('ZREM', KEYS[1], unpack(ARGV, from, to))
  if failures then
    local fields = {}
    for i = from, to do
      fields[#fields + 1] = P_COUNT .. ARGV[i]
      fields[#fields + 1] = P_REASON .. ARGV[i]
    end
    redis.call('HDEL', KEYS[2], unpack(fields))
  end
end
return n
