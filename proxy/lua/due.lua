-- Due: the proxies whose check is due, with their URLs and whether each
-- has proven itself: usable now, or passed a check within the proven
-- window (a proxy evicted by real traffic lately). A proxy held while the
-- breaker is open stops being proven once the window has passed since its
-- last pass, so a proxy that died for good is judged, and removed, in the
-- end even if it died with many others. Each is pushed back by a hold time, so a validator that dies
-- mid-check leaves it to be checked again later rather than lost.
-- KEYS: schedule, urls, usable, the record keys' stem (record key = stem .. id).
-- arg: limit, hold ms, proven window ms.
local schedule, urls, usable, stem = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now = now_ms()
local ids = redis.call('ZRANGEBYSCORE', schedule, '-inf', now, 'LIMIT', 0, tonumber(arg(1)))
local out = {}
for _, id in ipairs(ids) do
  local url = redis.call('HGET', urls, id)
  if url then
    redis.call('ZADD', schedule, now + tonumber(arg(2)), id)
    local passed = tonumber(redis.call('HGET', stem .. id, F_PASSED_MS) or '')
    local proven = redis.call('ZSCORE', usable, id) or (passed and now - passed <= tonumber(arg(3)))
    out[#out + 1] = id
    out[#out + 1] = url
    out[#out + 1] = proven and '1' or '0'
  else
    redis.call('ZREM', schedule, id)
  end
end
return out
