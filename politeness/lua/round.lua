-- round: one process settles, in one step, what it needs from the budgets
-- of the hosts of one shard: it books times to send requests at (the
-- host's GCRA on the server's clock), settles its slots of each host's
-- concurrency cap, tells how the host answered, and renews its hold on
-- every slot it has in the shard. A process pays one round trip for all
-- its hosts, and none per request: a request waits for a booked time on
-- the process's own clock.
--
-- KEYS[1] the shard's hosts hash (host -> packed state, packed.lua),
-- KEYS[2] its live hash (process ID -> deadline, server ms).
-- ARGV[1] holder (the process's ID), ARGV[2] lease ms, ARGV[3] state ttl
-- ms, ARGV[4] final (1: the process stops; it gives back everything it
-- names and leaves the live hash), ARGV[5] how many entries of the hosts
-- hash to sweep (0: none), ARGV[6] cut multiplier, ARGV[7] raise per good
-- answer, ARGV[8] min factor, ARGV[9] ms between cuts, ARGV[10] window
-- ms, ARGV[11] least throttled answers in a window to cut, ARGV[12] least
-- share of throttled answers to cut, ARGV[13] horizon ms.
-- Then REC values per host: host, keep (slots it still holds, or -1:
-- leave them as they are), want (slots it could use, at most the cap),
-- book (times wanted), lead ms (the earliest a booked time may be, from
-- now: the process's round trip), interval ms (float), burst, cap,
-- answers that went well, throttled answers (429, 503), pause ms the host
-- asked for (429 + Retry-After), Retry-After ms of 503s (a pause only if
-- the host is cut).
--
-- Returns {now, lapsed, ...} then REC_OUT values per host: {held, share,
-- contended, start_us, booked, step_us, wait_ms, paused_ms, factor_ppm,
-- watched}, every one an integer (start and step in microseconds, the
-- factor in millionths: formatting fractions as text costs the script
-- more than all else it does for a host):
-- now is the server's clock (ms, fractional), for the process to map
-- booked times to its own; lapsed is 1 when the process's hold had lapsed
-- (every slot it held in the shard was freed: it must not start requests
-- on them); held is the slots it holds now (-1 when keep was -1); share
-- its fair share of the cap (it gives back what it holds beyond);
-- contended 1 if some process holds less than its share (holders then
-- settle more often, so slots move quickly); booked times go at
-- now + max(lead, start + j*step) for j = 0 .. booked-1 (the first is
-- booked however far the host is booked already; the others only within
-- the horizon); wait_ms how long the host stays paused when nothing could
-- be booked; factor the rate factor after the feedback; watched 1 while
-- the host is slowed or has throttled answers in its window (its good
-- answers then matter, and are told).
local REC = 12
local FIRST = 14
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local holder = ARGV[1]
local lease, state_ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
local final, sweep = ARGV[4] == '1', tonumber(ARGV[5])
local cut_by, raise, min_factor = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local cut_every, window = tonumber(ARGV[9]), tonumber(ARGV[10])
local cut_thr, cut_share, horizon = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])

-- 1. Who is alive: a process whose deadline passed holds nothing, in any
-- host of the shard; its entry goes.
local live, dead = {}, {}
local raw = redis.call('HGETALL', KEYS[2])
for i = 1, #raw, 2 do
  local d = tonumber(raw[i + 1])
  if raw[i] ~= LIVE_SWEEP then
    if d and d > now then
      live[raw[i]] = true
    else
      dead[#dead + 1] = raw[i]
    end
  end
end
local lapsed = not live[holder]
if final then
  dead[#dead + 1] = holder
  live[holder] = nil
end
if #dead > 0 then
  redis.call('HDEL', KEYS[2], unpack(dead))
end
if not final then
  redis.call('HSET', KEYS[2], holder, int(now + lease))
end

-- 2. Feedback: a host is cut only when a real share of its recent
-- answers say it is overloaded, not for one flaky URL's 503; it is raised
-- back a little by every good answer. Returns whether the state changed,
-- and whether the host was cut.
local function feedback(st, ok, thr)
  if now - st.win_at > window then
    st.win_at, st.win_ok, st.win_thr = now, 0, 0
  end
  -- Good answers matter only to a host being slowed or watched: the
  -- common case writes nothing.
  if not (thr > 0 or (ok > 0 and (st.factor < 1 or st.win_thr > 0))) then
    return false, false
  end
  st.win_ok, st.win_thr = st.win_ok + ok, st.win_thr + thr
  if st.win_thr >= cut_thr and st.win_thr >= cut_share * (st.win_ok + st.win_thr) and now - st.cut_at >= cut_every then
    st.factor = math.max(st.factor * cut_by, min_factor)
    st.cut_at = now
    st.win_at, st.win_ok, st.win_thr = now, 0, 0
    return true, true
  end
  if thr == 0 and st.factor < 1 then
    st.factor = math.min(st.factor + ok * raise, 1)
  end
  return true, false
end

-- 3. Slots: fair shares by water-filling over what each live process can
-- use, smallest first, so a process that needs one slot (a master walking
-- list pages) gets it whole and the rest is split evenly; ties go by ID,
-- so every process computes the same shares. With keep -1 the process
-- only learns its share (a round that books times for a host tells a
-- holder that it must give slots back), and its entry stays as it was.
-- Returns held (-1 with keep -1), share, contended, and whether the
-- entries changed.
local function by_want(a, b)
  if a.want ~= b.want then
    return a.want < b.want
  end
  return a.id < b.id
end

local function settle_slots(st, keep, want, cap)
  local list, kept, others, mine = {}, {}, 0, nil
  for _, e in ipairs(st.holders) do
    if e.id == holder then
      if not lapsed then
        mine = e
      end
    elseif live[e.id] then
      others = others + e.held
      list[#list + 1] = {id = e.id, want = math.min(e.want, cap), held = e.held}
      kept[#kept + 1] = e
    end
  end
  local peek = keep < 0
  local me = {id = holder, want = want, held = math.min(math.max(keep, 0), mine and mine.held or 0)}
  if peek then
    me.want, me.held = mine and math.min(mine.want, cap) or 0, mine and mine.held or 0
  end
  list[#list + 1] = me
  if #list > 1 then
    table.sort(list, by_want)
  end
  local left = cap
  for i, e in ipairs(list) do
    e.share = math.min(e.want, math.floor(left / (#list - i + 1)))
    left = left - e.share
  end
  local changed = not peek or #kept + (mine and 1 or 0) ~= #st.holders
  if peek then
    if mine then
      kept[#kept + 1] = mine
    end
  else
    local free = math.max(cap - others - me.held, 0)
    if me.share > me.held and free > 0 then
      me.held = me.held + math.min(me.share - me.held, free)
    end
    if me.held > 0 or want > 0 then
      kept[#kept + 1] = {id = holder, held = me.held, want = want}
    end
  end
  st.holders = kept
  local contended = 0
  for _, e in ipairs(list) do
    if e.held < e.share then
      contended = 1
    end
  end
  return peek and -1 or me.held, me.share, contended, changed
end

-- 4. Bookings: the GCRA on the server's clock, scaled by the factor. The
-- first time is booked however far ahead the host is booked (a process
-- that asks always gets one, so nobody asks again and again); the others
-- only within the horizon, so one process cannot book a host for long.
local function book(st, n, lead, interval, burst)
  local step = interval / st.factor
  local t0 = math.max(st.tat, now + lead)
  local base = t0 - (burst - 1) * step
  local booked = 1
  while booked < n and math.max(now + lead, base + booked * step) <= now + horizon do
    booked = booked + 1
  end
  st.tat = t0 + booked * step
  return base - now, booked, step
end

-- 5. Each host of the round.
local n = math.floor((#ARGV - FIRST + 1) / REC)
local out = {string.format('%.3f', now), lapsed and 1 or 0}
local states = {}
if n > 0 then
  local names = {}
  for i = 0, n - 1 do
    names[i + 1] = ARGV[FIRST + i * REC]
  end
  states = redis.call('HMGET', KEYS[1], unpack(names))
end
local writes, deletes = {}, {}
for i = 0, n - 1 do
  local a = FIRST + i * REC
  local host = ARGV[a]
  local keep, want, ask, lead = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local interval, burst, cap = tonumber(ARGV[a + 5]), tonumber(ARGV[a + 6]), tonumber(ARGV[a + 7])
  local ok, thr, pause, pause503 = tonumber(ARGV[a + 8]), tonumber(ARGV[a + 9]), tonumber(ARGV[a + 10]), tonumber(ARGV[a + 11])
  local st = unpack_state(states[i + 1] or nil, now)
  local dirty, cut = feedback(st, ok, thr)
  if cut then
    pause = math.max(pause, pause503)
  end
  if pause > 0 and now + pause > st.paused then
    st.paused, dirty = now + pause, true
  end
  local held, share, contended, changed = settle_slots(st, keep, want, cap)
  dirty = dirty or changed
  local start, booked, step, wait = 0, 0, 0, 0
  if st.paused > now then
    wait = st.paused - now
  elseif ask > 0 then
    start, booked, step = book(st, ask, lead, interval, burst)
    dirty = true
  end
  if dirty then
    st.touched = now
    if at_rest(st, now) then
      deletes[#deletes + 1] = host
    else
      writes[#writes + 1] = host
      writes[#writes + 1] = pack_state(st)
    end
  end
  local o = #out
  out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = held, share, contended, math.floor(start * 1000 + 0.5), booked
  out[o + 6], out[o + 7], out[o + 8] = math.floor(step * 1000 + 0.5), math.ceil(wait), math.ceil(math.max(st.paused - now, 0))
  out[o + 9], out[o + 10] = math.floor(st.factor * 1e6 + 0.5), (st.factor < 1 or st.win_thr > 0) and 1 or 0
end
if #writes > 0 then
  redis.call('HSET', KEYS[1], unpack(writes))
end
if #deletes > 0 then
  redis.call('HDEL', KEYS[1], unpack(deletes))
end

-- 6. Now and then (a heartbeat round), a few entries of hosts nobody used
-- for the state ttl go, and both hashes are kept from expiring while the
-- cluster runs: a cluster that stops leaves nothing behind for long.
if sweep > 0 then
  local cursor = redis.call('HGET', KEYS[2], LIVE_SWEEP) or '0'
  local res = redis.call('HSCAN', KEYS[1], cursor, 'COUNT', sweep)
  local stale = {}
  for j = 1, #res[2], 2 do
    local st = unpack_state(res[2][j + 1], now)
    local alive = false
    for _, e in ipairs(st.holders) do
      alive = alive or live[e.id] == true
    end
    if not alive and st.paused <= now and st.tat <= now and now - st.touched > state_ttl then
      stale[#stale + 1] = res[2][j]
    end
  end
  if #stale > 0 then
    redis.call('HDEL', KEYS[1], unpack(stale))
  end
  redis.call('HSET', KEYS[2], LIVE_SWEEP, res[1])
  redis.call('PEXPIRE', KEYS[1], int(state_ttl + lease))
  redis.call('PEXPIRE', KEYS[2], int(state_ttl + lease))
end
return out
