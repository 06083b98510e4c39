-- Admit: add new candidates from the sources to the validator's schedule,
-- due at once, up to the pool's maximum. Proxies already tracked, or
-- rejected or dead within the graveyard's time, are left alone.
-- KEYS: schedule, graveyard, urls, then one record key per candidate.
-- arg: max size, graveyard ms, n, then per candidate: id, url, display, scheme.
local schedule, graveyard, urls = KEYS[1], KEYS[2], KEYS[3]
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', graveyard, '-inf', now - tonumber(arg(2)))
local max, size = tonumber(arg(1)), redis.call('ZCARD', schedule)
local admitted, known, buried, full = 0, 0, 0, 0
for i = 1, tonumber(arg(3)) do
  local a = 3 + (i - 1) * 4
  local id, rec = arg(a + 1), KEYS[3 + i]
  if redis.call('ZSCORE', schedule, id) then
    known = known + 1
  elseif redis.call('ZSCORE', graveyard, id) then
    buried = buried + 1
  elseif size >= max then
    full = full + 1
  else
    redis.call('DEL', rec)
    redis.call('HSET', rec, F_STATE, S_NEW, F_PROXY, arg(a + 3), F_SCHEME, arg(a + 4),
      F_ADDED_MS, now, F_SUCCESS, 1, F_LATENCY_MS, 0, F_FAILED_ROUNDS, 0)
    redis.call('HSET', urls, id, arg(a + 2))
    redis.call('ZADD', schedule, now, id)
    size, admitted = size + 1, admitted + 1
  end
end
return {admitted, known, buried, full}
