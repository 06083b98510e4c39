-- Pick: choose a proxy for one request to one host, weighted random by
-- score among the best that are eligible (not excluded, cooling down,
-- banned for the host, unable to tunnel when needed, or at their cap), and
-- take one of its concurrency slots.
-- KEYS: usable, cooldown, ban(host), urls, caps, tunnel, slots, busy.
-- ARGV: r in [0,1), best, max scan, need tunnel (1/0), default cap,
-- slot lease ms, token, n excluded, excluded IDs...
local usable, cooldown, ban, urls, caps, tunnel, slots, busy =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local now = now_ms()

local function release(member)
  if redis.call('ZREM', slots, member) == 1 then
    local id = string.match(member, '^(%S+)')
    if redis.call('HINCRBY', busy, id, -1) <= 0 then
      redis.call('HDEL', busy, id)
    end
  end
end

-- Slots of requests never reported (a crashed slave) lapse.
for _, m in ipairs(redis.call('ZRANGEBYSCORE', slots, '-inf', now, 'LIMIT', 0, 100)) do
  release(m)
end
redis.call('ZREMRANGEBYSCORE', cooldown, '-inf', now)
redis.call('ZREMRANGEBYSCORE', ban, '-inf', now)

local size = redis.call('ZCARD', usable)
if size == 0 then
  return fail('EMPTY', 'no usable proxy')
end

local excluded = {}
for i = 9, 8 + tonumber(ARGV[8]) do
  excluded[ARGV[i]] = true
end
local need_tunnel = ARGV[4] == '1'
local default_cap = ARGV[5]

-- capped is set when a proxy that could serve the request was passed over
-- only for being at its cap: the caller then asks again soon (BUSY)
-- rather than backing off (UNAVAILABLE).
local capped = false

local function eligible(id)
  if excluded[id] or redis.call('ZSCORE', cooldown, id) or redis.call('ZSCORE', ban, id) then
    return false
  end
  if need_tunnel and redis.call('SISMEMBER', tunnel, id) == 0 then
    return false
  end
  local cap = tonumber(redis.call('HGET', caps, id) or default_cap)
  if tonumber(redis.call('HGET', busy, id) or '0') < cap then
    return true
  end
  capped = true
  return false
end

-- Draws: weighted random over one page of the best; an ineligible draw is
-- dropped and drawn again (only the proxies drawn are looked at, so a
-- pick costs a few calls, not a scan); an exhausted page moves on to the
-- next. Park-Miller's generator, seeded by r, gives the further draws.
local seed = math.floor(tonumber(ARGV[1]) * 2147483646) + 1
local function uniform()
  local u = seed / 2147483647
  seed = (seed * 16807) % 2147483647
  return u
end

local function draw(page)
  local ids, weights, total = {}, {}, 0
  for i = 1, #page, 2 do
    local w = math.max(tonumber(page[i + 1]), 1)
    ids[#ids + 1] = page[i]
    weights[#weights + 1] = w
    total = total + w
  end
  while #ids > 0 do
    local x, k = uniform() * total, #ids
    for i = 1, #ids do
      x = x - weights[i]
      if x < 0 then
        k = i
        break
      end
    end
    if eligible(ids[k]) then
      return ids[k]
    end
    total = total - weights[k]
    table.remove(ids, k)
    table.remove(weights, k)
  end
  return nil
end

local best, scan = tonumber(ARGV[2]), tonumber(ARGV[3])
local chosen, from = nil, 0
while not chosen and from < scan do
  local page = redis.call('ZREVRANGE', usable, from, math.min(from + best, scan) - 1, 'WITHSCORES')
  if #page == 0 then break end
  chosen = draw(page)
  from = from + best
end
if not chosen and capped then
  return fail('BUSY', 'every proxy free for this host is at its cap')
end
if not chosen then
  return fail('UNAVAILABLE', 'none of ' .. size .. ' usable proxies is free for this host')
end
redis.call('ZADD', slots, now + tonumber(ARGV[6]), chosen .. ' ' .. ARGV[7])
redis.call('HINCRBY', busy, chosen, 1)
return {chosen, redis.call('HGET', urls, chosen) or ''}
