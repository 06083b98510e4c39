-- Due: the proxies whose check is due, with their URLs and whether they
-- are usable now. Each is pushed back by a hold time, so a validator that
-- dies mid-check leaves it to be checked again later rather than lost.
-- KEYS: schedule, urls, usable. ARGV: limit, hold ms.
local now = now_ms()
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local out = {}
for _, id in ipairs(ids) do
  local url = redis.call('HGET', KEYS[2], id)
  if url then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), id)
    out[#out + 1] = id
    out[#out + 1] = url
    out[#out + 1] = redis.call('ZSCORE', KEYS[3], id) and '1' or '0'
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
