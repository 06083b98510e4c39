-- state: what the budget of one host looks like now.
-- KEYS[1] the shard's hosts hash, KEYS[2] its live hash; ARGV[1] the host.
-- Returns {slots held by live processes, live processes holding or
-- wanting some, factor, pause_ms}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local packed = redis.call('HGET', KEYS[1], ARGV[1])
if not packed then
  return {0, 0, '1', 0}
end
local st = unpack_state(packed, now)
local held, holders = 0, 0
for _, e in ipairs(st.holders) do
  local d = tonumber(redis.call('HGET', KEYS[2], e.id) or '0') or 0
  if d > now then
    held = held + e.held
    holders = holders + 1
  end
end
return {held, holders, string.format('%.6f', st.factor), math.floor(math.max(st.paused - now, 0))}
