-- Leased.Take: move up to ARGV[1] entries from the head of list KEYS[1]
-- into in-flight set KEYS[2] with a lease of ARGV[2] ms, and count each
-- delivery in attempts hash KEYS[3]: field ARGV[3]..entry holds the count,
-- ARGV[4]..entry the reason the last holder gave up, if any (the prefixes
-- are cluster.AttemptCountPrefix and AttemptReasonPrefix). Reply: per
-- entry, the entry, its delivery count and that reason ('' for none). The
-- attempts are read with one HMGET and written with one HSET per chunk of
-- entries, not a HINCRBY and a HGET per entry.
local entries = redis.call('LPOP', KEYS[1], tonumber(ARGV[1]))
if not entries then
  return {}
end
local deadline = int(now_ms() + tonumber(ARGV[2]))
local countPrefix, reasonPrefix = ARGV[3], ARGV[4]
local out, counts = {}, {}
local CHUNK = 500
for from = 1, #entries, CHUNK do
  local to = math.min(from + CHUNK - 1, #entries)
  local members, fields = {}, {}
  for i = from, to do
    members[#members + 1] = deadline
    members[#members + 1] = entries[i]
    fields[#fields + 1] = countPrefix .. entries[i]
    fields[#fields + 1] = reasonPrefix .. entries[i]
  end
  redis.call('ZADD', KEYS[2], unpack(members))
  local held = redis.call('HMGET', KEYS[3], unpack(fields))
  local writes = {}
  for i = from, to do
    local j = 2 * (i - from) + 1
    local field = fields[j]
    -- an entry queued twice counts twice, as HINCRBY would
    local n = (counts[field] or tonumber(held[j] or '') or 0) + 1
    counts[field] = n
    writes[#writes + 1] = field
    writes[#writes + 1] = n
    local reason = ''
    if n > 1 then
      reason = held[j + 1] or ''
    end
    out[#out + 1] = entries[i]
    out[#out + 1] = n
    out[#out + 1] = reason
  end
  redis.call('HSET', KEYS[3], unpack(writes))
end
return out
