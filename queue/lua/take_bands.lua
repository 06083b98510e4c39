-- Leased.Take of a list kept in bands (a slave queue of a job whose pages
-- have priorities): take up to ARGV[1] entries, the bands' heads in the
-- order of their effective priority, into in-flight set KEYS[1] with a
-- lease of ARGV[2] ms; KEYS[2] is the attempts hash, KEYS[3] the hash of
-- when each band was last served (ms, by priority), KEYS[4..] the bands'
-- lists, of priorities ARGV[4..]. A band's effective priority is its
-- priority plus one for each ARGV[3] ms it has waited: since it was last
-- served, or since a take first saw it holding entries; so the highest
-- band goes first and a lower one that waits long enough gets its turn
-- (aging: no band starves). An empty band forgets when it was served: it
-- has waited for nothing. Ties go to the higher priority. Reply as
-- deliver (deliver.lua) says.
local want, step = tonumber(ARGV[1]), tonumber(ARGV[3])
local now = now_ms()
local prios = {}
for i = 4, #ARGV do
  prios[#prios + 1] = ARGV[i]
end
local served = redis.call('HMGET', KEYS[3], unpack(prios))
local cands, gone = {}, {}
for i, p in ipairs(prios) do
  if redis.call('LLEN', KEYS[3 + i]) > 0 then
    local since = tonumber(served[i])
    if not since then
      since = now
      redis.call('HSET', KEYS[3], p, int(now))
    end
    cands[#cands + 1] = {key = KEYS[3 + i], p = p, eff = tonumber(p) + (now - since) / step}
  elseif served[i] then
    gone[#gone + 1] = p
  end
end
if #gone > 0 then
  redis.call('HDEL', KEYS[3], unpack(gone))
end
table.sort(cands, function(a, b)
  if a.eff ~= b.eff then
    return a.eff > b.eff
  end
  return tonumber(a.p) > tonumber(b.p)
end)
local entries = {}
for _, c in ipairs(cands) do
  if #entries >= want then
    break
  end
  local got = redis.call('LPOP', c.key, want - #entries)
  if got then
    for _, e in ipairs(got) do
      entries[#entries + 1] = e
    end
    redis.call('HSET', KEYS[3], c.p, int(now))
  end
end
if #entries == 0 then
  return {}
end
return deliver(entries, KEYS[1], KEYS[2], tonumber(ARGV[2]))
