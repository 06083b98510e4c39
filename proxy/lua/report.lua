-- Report: feed a real request's outcome back and release its slot.
-- KEYS: record, usable, cooldown, ban(host), slots, busy, schedule, tunnel.
-- arg: id, token, outcome, latency ms, ban ms, cooldown ms, alpha,
-- half-score latency ms, evict after timeouts, recheck-after-evict ms, reason.
local rec, usable, cooldown, ban, slots, busy, schedule, tunnel =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local id, kind = arg(1), arg(3)
if redis.call('ZREM', slots, id .. ' ' .. arg(2)) == 1 then
  if redis.call('HINCRBY', busy, id, -1) <= 0 then
    redis.call('HDEL', busy, id)
  end
end
if redis.call('HGET', rec, F_STATE) ~= S_USABLE then
  return 0 -- evicted or removed meanwhile: nothing to score
end
local now = now_ms()
local alpha, half = tonumber(arg(7)), tonumber(arg(8))

local function rescore(success, latency)
  local score = score_of(success, latency, half)
  redis.call('HSET', rec, F_SUCCESS, string.format('%.4f', success),
    F_LATENCY_MS, string.format('%.1f', latency), F_SCORE, score)
  redis.call('ZADD', usable, 'XX', score, id)
end

local function evict(reason)
  redis.call('HINCRBY', rec, F_EVICTIONS, 1)
  redis.call('HSET', rec, F_STATE, S_FAILING, F_REASON, reason)
  redis.call('ZREM', usable, id)
  redis.call('SREM', tunnel, id)
  redis.call('ZADD', schedule, now + tonumber(arg(10)), id)
end

local success, latency = hnum(rec, F_SUCCESS), hnum(rec, F_LATENCY_MS)
if kind == O_OK then
  redis.call('HINCRBY', rec, F_OK, 1)
  redis.call('HSET', rec, F_TIMEOUT_STREAK, 0)
  rescore(ewma(success, 1, alpha), ewma(latency, tonumber(arg(4)), alpha))
elseif kind == O_TIMEOUT then
  redis.call('HINCRBY', rec, F_TIMEOUTS, 1)
  local streak = redis.call('HINCRBY', rec, F_TIMEOUT_STREAK, 1)
  if streak >= tonumber(arg(9)) then
    evict(arg(11))
    return 0
  end
  redis.call('ZADD', cooldown, now + tonumber(arg(6)), id)
  rescore(ewma(success, 0, alpha), latency)
elseif kind == O_PROXY then
  evict(arg(11))
  return 0
elseif kind == O_BAN then
  redis.call('HINCRBY', rec, F_BANS, 1)
  local ms = tonumber(arg(5))
  redis.call('ZADD', ban, now + ms, id)
  if redis.call('PTTL', ban) < ms then
    redis.call('PEXPIRE', ban, ms)
  end
elseif kind == O_TARGET then
  redis.call('HINCRBY', rec, F_TARGET_ERRORS, 1)
else
  return fail('BADOUTCOME', kind)
end
return 1
