-- sync: one process settles its share of one host's budget. A process
-- holds slots of the host's concurrency cap for many requests in a row
-- and takes rate tokens in batches, so a request costs Redis nothing; it
-- calls this script to renew what it holds (a heartbeat), to ask for more,
-- to give back what others need, and to tell how the host answered.
--
-- KEYS[1] rate hash, KEYS[2] holders hash, KEYS[3] pause (value: until, server ms)
-- ARGV[1] holder (the process's ID), ARGV[2] keep (slots it still holds, or
-- -1: tokens only, leave the slots as they are),
-- ARGV[3] want (slots it could use, at most the cap), ARGV[4] ask (rate
-- tokens wanted), ARGV[5] interval ms between requests at full rate
-- (float), ARGV[6] burst, ARGV[7] cap, ARGV[8] lease ms, ARGV[9] state ttl
-- ms, ARGV[10] answers that went well, ARGV[11] throttled answers (429,
-- 503), ARGV[12] pause ms the host asked for (429 + Retry-After),
-- ARGV[13] Retry-After ms of 503s (a pause only if the host is cut),
-- ARGV[14] cut multiplier, ARGV[15] raise per good answer, ARGV[16] min
-- factor, ARGV[17] ms between cuts, ARGV[18] window ms, ARGV[19] least
-- throttled answers in a window to cut, ARGV[20] least share of throttled
-- answers to cut. The rate hash's fields are F_TAT, F_FACTOR, F_CUT_AT,
-- F_WIN_AT, F_WIN_OK, F_WIN_THR (politeness/scripts.go).
--
-- The holders hash maps each process that holds slots or wants some to
-- 'held|want|deadline' (deadline in server ms): an entry past its
-- deadline is a process that stopped renewing (it died, or cannot reach
-- Redis) and its slots are free again.
--
-- Returns {held, share, contended, tokens, wait_ms, paused_ms, lost, factor}:
-- the slots the process holds now (-1 when keep was -1); its fair share of the cap (it gives
-- back what it holds beyond); 1 if some process holds less than its share
-- (holders then sync more often, so the slots move quickly); rate tokens
-- granted; when asking for tokens again may grant more (0: no wait);
-- how long the host stays paused; 1 if the process's holding had lapsed
-- (its slots were freed: it must not start requests on them); the rate
-- factor after the feedback.
local now = now_ms()
local holder = ARGV[1]
local keep, want, ask = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local interval, burst, cap = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local lease_ms, state_ttl = tonumber(ARGV[8]), tonumber(ARGV[9])

-- 1. Feedback: a host is cut only when a real share of its recent answers
-- say it is overloaded, not for one flaky URL's 503; it is raised back a
-- little by every good answer.
local st = redis.call('HMGET', KEYS[1], F_TAT, F_FACTOR, F_CUT_AT, F_WIN_AT, F_WIN_OK, F_WIN_THR)
local tat = tonumber(st[1]) or now
local factor = tonumber(st[2]) or 1
local ok, thr = tonumber(ARGV[10]), tonumber(ARGV[11])
local cut = false
local win_at, win_ok, win_thr = tonumber(st[4]) or now, tonumber(st[5]) or 0, tonumber(st[6]) or 0
if now - win_at > tonumber(ARGV[18]) then
  win_at, win_ok, win_thr = now, 0, 0
end
-- Good answers matter only to a host being slowed or watched (a window
-- with throttled answers in it): the common case writes nothing.
if thr > 0 or (ok > 0 and (factor < 1 or win_thr > 0)) then
  local cut_at = tonumber(st[3]) or 0
  win_ok, win_thr = win_ok + ok, win_thr + thr
  if win_thr >= tonumber(ARGV[19]) and win_thr >= tonumber(ARGV[20]) * (win_ok + win_thr)
      and now - cut_at >= tonumber(ARGV[17]) then
    factor = math.max(factor * tonumber(ARGV[14]), tonumber(ARGV[16]))
    cut = true
    redis.call('HSET', KEYS[1], F_CUT_AT, int(now))
    win_at, win_ok, win_thr = now, 0, 0
  elseif thr == 0 and factor < 1 then
    factor = math.min(factor + ok * tonumber(ARGV[15]), 1)
  end
  redis.call('HSET', KEYS[1], F_FACTOR, string.format('%.6f', factor), F_WIN_AT, int(win_at),
    F_WIN_OK, int(win_ok), F_WIN_THR, int(win_thr))
  redis.call('PEXPIRE', KEYS[1], int(math.max(tat - now, 0) + state_ttl))
end

local pause = tonumber(ARGV[12])
if cut then
  pause = math.max(pause, tonumber(ARGV[13]))
end
local paused_until = tonumber(redis.call('GET', KEYS[3]) or '0') or 0
if pause > 0 and now + pause > paused_until then
  paused_until = now + pause
  redis.call('SET', KEYS[3], int(paused_until), 'PX', int(pause))
end

-- 2. Slots (unless keep is -1: tokens only). Entries past their deadline
-- are dropped: their slots are free.
local function settle_slots()
  local raw = redis.call('HGETALL', KEYS[2])
  local list, others, mine = {}, 0, nil
  for i = 1, #raw, 2 do
    local h, w, d = string.match(raw[i + 1], '^(%d+)|(%d+)|(%d+)$')
    h, w, d = tonumber(h), tonumber(w), tonumber(d)
    if not d or d <= now then
      redis.call('HDEL', KEYS[2], raw[i])
    elseif raw[i] == holder then
      mine = h
    else
      others = others + h
      list[#list + 1] = {id = raw[i], want = math.min(w, cap), held = h}
    end
  end
  local lost = 0
  if mine == nil then
    if keep > 0 then
      lost = 1
    end
    keep = 0
  else
    keep = math.min(keep, mine)
  end
  local me = {id = holder, want = want, held = keep}
  list[#list + 1] = me

  -- Fair shares: water-filling over what each process can use, smallest
  -- first, so a process that needs one slot (a master walking list pages)
  -- gets it whole and the rest is split evenly; ties go by ID, so every
  -- process computes the same shares.
  table.sort(list, function(a, b)
    if a.want ~= b.want then
      return a.want < b.want
    end
    return a.id < b.id
  end)
  local left = cap
  for i, e in ipairs(list) do
    e.share = math.min(e.want, math.floor(left / (#list - i + 1)))
    left = left - e.share
  end

  local free = math.max(cap - others - keep, 0)
  local held = keep
  if me.share > keep and free > 0 then
    held = keep + math.min(me.share - keep, free)
  end
  me.held = held
  if held == 0 and want == 0 then
    redis.call('HDEL', KEYS[2], holder)
  else
    redis.call('HSET', KEYS[2], holder, int(held) .. '|' .. int(want) .. '|' .. int(now + lease_ms))
    redis.call('PEXPIRE', KEYS[2], int(lease_ms + 1000))
  end
  local contended = 0
  for _, e in ipairs(list) do
    if e.held < e.share then
      contended = 1
    end
  end
  return held, me.share, contended, lost
end

local held, share, contended, lost = -1, 0, 0, 0
if keep >= 0 then
  held, share, contended, lost = settle_slots()
end

-- 3. Rate tokens: the GCRA, on the server's clock, scaled by the factor.
local tokens, wait = 0, 0
if paused_until > now then
  wait = paused_until - now
elseif ask > 0 then
  local step = interval / factor
  tat = math.max(tat, now)
  local fits = math.floor((now - tat) / step + burst + 1e-9)
  tokens = math.max(math.min(ask, fits), 0)
  if tokens > 0 then
    tat = tat + tokens * step
    redis.call('HSET', KEYS[1], F_TAT, string.format('%.3f', tat))
    redis.call('PEXPIRE', KEYS[1], int(math.ceil(tat - now) + state_ttl))
  end
  if tokens < ask then
    wait = math.max(math.ceil(tat - (burst - 1) * step - now), 1)
  end
end
return {held, share, contended, tokens, wait, math.max(paused_until - now, 0), lost, string.format('%.6f', factor)}
