-- Shared by the takes (take.lua, take_bands.lua): deliver moves entries,
-- just taken off a list, into in-flight set `inflight` with a lease of
-- lease_ms and returns the take's reply. Attempts hash `attempts` holds,
-- for an entry handed back after a delivery that did not finish it (see
-- reclaim, release, move), field P_COUNT..entry: how many such
-- deliveries there were; and P_REASON..entry: the reason the last holder
-- gave up, if any. Reply: per entry, the entry, this delivery's number (1
-- for the first) and that reason ('' for none).
-- A first delivery writes nothing: the hash is written only when a
-- delivery fails, and read only while it holds something, so a crawl
-- where nothing fails costs an LPOP and a ZADD per batch, not a hash
-- read and write per entry.
local function deliver(entries, inflight, attempts, lease_ms)
  local deadline = int(now_ms() + lease_ms)
  local failures = redis.call('EXISTS', attempts) == 1
  local out, seen = {}, {}
  local CHUNK = 500
  for from = 1, #entries, CHUNK do
    local to = math.min(from + CHUNK - 1, #entries)
    local members, fields = {}, {}
    for i = from, to do
      members[#members + 1] = deadline
      members[#members + 1] = entries[i]
      if failures then
        fields[#fields + 1] = P_COUNT .. entries[i]
        fields[#fields + 1] = P_REASON .. entries[i]
      end
    end
    redis.call('ZADD', inflight, unpack(members))
    local held = failures and redis.call('HMGET', attempts, unpack(fields)) or {}
    for i = from, to do
      local j = 2 * (i - from) + 1
      local e = entries[i]
      -- an entry queued twice is delivered twice: the second is one more
      local n = (seen[e] or tonumber(held[j] or '') or 0) + 1
      seen[e] = n
      out[#out + 1] = e
      out[#out + 1] = n
      out[#out + 1] = n > 1 and (held[j + 1] or '') or ''
    end
  end
  return out
end
