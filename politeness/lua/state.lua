-- state: what the budget of one host looks like now.
-- KEYS[1] rate hash, KEYS[2] holders hash, KEYS[3] pause
-- Returns {slots held, processes holding or wanting, factor, pause_ms}.
local now = now_ms()
local raw = redis.call('HGETALL', KEYS[2])
local held, holders = 0, 0
for i = 1, #raw, 2 do
  local h, _, d = string.match(raw[i + 1], '^(%d+)|(%d+)|(%d+)$')
  if d and tonumber(d) > now then
    held = held + tonumber(h)
    holders = holders + 1
  end
end
local factor = redis.call('HGET', KEYS[1], F_FACTOR) or '1'
local till = tonumber(redis.call('GET', KEYS[3]) or '0') or 0
return {held, holders, factor, math.max(till - now, 0)}
