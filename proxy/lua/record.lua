-- Record: apply one batch of check results, only for the validator that
-- holds the lease (a validator that lost it mid-round writes nothing). A
-- good proxy becomes usable and is checked again after its interval; a
-- failed one leaves the usable set and is retried after an exponential
-- backoff with jitter, and is removed after max failed rounds in a row; a
-- rejected one is removed at once; a held one (circuit breaker open) is
-- only rescheduled; an unreachable one (the judge cannot be reached from
-- it) is not judged: it keeps its state, gets the reason, and is
-- rescheduled.
-- KEYS: usable, schedule, graveyard, urls, caps, tunnel, cooldown, lease,
-- then one record key per result.
-- arg: alpha, half-score latency ms, max failed rounds, graveyard ms,
-- backoff base ms, backoff max ms, cap, lease token, n, then per result:
-- id, verdict, latency ms, tunnel (1/0), anonymity, reason, delay ms,
-- jitter in [0,1).
local usable, schedule, graveyard, urls, caps, tunnel, cooldown, lease =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local holder = redis.call('GET', lease)
if holder ~= arg(8) then
  return fail('LEASELOST', 'the lease is held by ' .. (holder or 'nobody'))
end
local now = now_ms()
local alpha, half, max_rounds = tonumber(arg(1)), tonumber(arg(2)), tonumber(arg(3))
local grave_ms, base, cap_ms = tonumber(arg(4)), tonumber(arg(5)), tonumber(arg(6))

local function bury(rec, id, reason)
  local state = S_REJECTED
  if redis.call('HEXISTS', rec, F_USABLE_MS) == 1 then state = S_DEAD end
  redis.call('HSET', rec, F_STATE, state, F_REASON, reason, F_REMOVED_MS, now)
  redis.call('PEXPIRE', rec, grave_ms)
  redis.call('ZREM', usable, id)
  redis.call('ZREM', schedule, id)
  redis.call('ZREM', cooldown, id)
  redis.call('SREM', tunnel, id)
  redis.call('HDEL', urls, id)
  redis.call('HDEL', caps, id)
  redis.call('ZADD', graveyard, now, id)
  return 1
end

local function good(rec, id, a)
  local success = ewma(hnum(rec, F_SUCCESS), 1, alpha)
  local lat = tonumber(arg(a + 3))
  local old = hnum(rec, F_LATENCY_MS)
  if old > 0 then lat = ewma(old, lat, alpha) end
  local score = score_of(success, lat, half)
  redis.call('HINCRBY', rec, F_CHECKS_OK, 1)
  redis.call('HSET', rec, F_STATE, S_USABLE, F_FAILED_ROUNDS, 0, F_REASON, arg(a + 6),
    F_SUCCESS, string.format('%.4f', success), F_LATENCY_MS, string.format('%.1f', lat),
    F_SCORE, score, F_ANONYMITY, arg(a + 5), F_TUNNEL, arg(a + 4), F_TIMEOUT_STREAK, 0)
  redis.call('HSETNX', rec, F_USABLE_MS, now)
  redis.call('HSET', rec, F_PASSED_MS, now)
  redis.call('ZADD', usable, score, id)
  if arg(a + 4) == '1' then
    redis.call('SADD', tunnel, id)
  else
    redis.call('SREM', tunnel, id)
  end
  redis.call('HSET', caps, id, arg(7))
  redis.call('ZADD', schedule, now + tonumber(arg(a + 7)), id)
end

local function bad(rec, id, a)
  local rounds = redis.call('HINCRBY', rec, F_FAILED_ROUNDS, 1)
  if rounds >= max_rounds then
    return bury(rec, id, arg(a + 6))
  end
  redis.call('HSET', rec, F_STATE, S_FAILING, F_REASON, arg(a + 6),
    F_SUCCESS, string.format('%.4f', ewma(hnum(rec, F_SUCCESS), 0, alpha)))
  redis.call('ZREM', usable, id)
  redis.call('SREM', tunnel, id)
  local d = math.min(cap_ms, base * 2 ^ (rounds - 1))
  redis.call('ZADD', schedule, now + math.floor(d / 2 + tonumber(arg(a + 8)) * d / 2), id)
  return 0
end

local buried = 0
for i = 1, tonumber(arg(9)) do
  local a = 9 + (i - 1) * 8
  local id, verdict, rec = arg(a + 1), arg(a + 2), KEYS[8 + i]
  if not redis.call('ZSCORE', schedule, id) then
    -- removed meanwhile: nothing to record
  elseif verdict == V_UNREACHABLE then
    redis.call('HSET', rec, F_REASON, arg(a + 6))
    redis.call('ZADD', schedule, now + tonumber(arg(a + 7)), id)
  else
    redis.call('HSET', rec, F_CHECKED_MS, now)
    if verdict ~= V_HOLD then
      redis.call('HINCRBY', rec, F_CHECKS, 1)
    end
    if verdict == V_OK then
      good(rec, id, a)
    elseif verdict == V_HOLD then
      -- jittered, so the proxies held together do not all come back in
      -- one batch and hold the breaker open by themselves
      local hold = tonumber(arg(a + 7))
      redis.call('ZADD', schedule, now + math.floor(hold * (0.5 + tonumber(arg(a + 8)))), id)
    elseif verdict == V_REJECT then
      buried = buried + bury(rec, id, arg(a + 6))
    else
      buried = buried + bad(rec, id, a)
    end
  end
end
return buried
