-- packed: a host's budget as its shard's hosts hash keeps it, in one
-- string, so that one HMGET reads and one HSET writes every host a round
-- settles:
--
--   tat|factor|cut_at|win_at|win_ok|win_thr|paused|touched|holders
--
-- tat: the GCRA's theoretical arrival time (server ms, fractional); factor:
-- the share of the rule's rate in use after backoff, (0, 1]; cut_at: server
-- ms of the last cut; win_at, win_ok, win_thr: the window of recent answers
-- that decides a cut (when it began, the answers that went well, the
-- throttled ones); paused: server ms until which nobody sends (0: none);
-- touched: server ms of the last change; holders: the processes that hold
-- slots of the host's cap or want some, 'id/held/want' separated by spaces.
-- A process whose deadline in the live hash has passed holds nothing.

local function unpack_state(s, now)
  local st = {tat = now, factor = 1, cut_at = 0, win_at = now, win_ok = 0, win_thr = 0,
    paused = 0, touched = now, holders = {}}
  if not s then
    return st
  end
  local a, b, c, d, e, f, g, h, rest = string.match(s,
    '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|(.*)$')
  if not a then
    return st
  end
  st.tat, st.factor, st.cut_at = tonumber(a) or now, tonumber(b) or 1, tonumber(c) or 0
  st.win_at, st.win_ok, st.win_thr = tonumber(d) or now, tonumber(e) or 0, tonumber(f) or 0
  st.paused, st.touched = tonumber(g) or 0, tonumber(h) or now
  for id, held, want in string.gmatch(rest, '([^/ ]+)/(%d+)/(%d+)') do
    st.holders[#st.holders + 1] = {id = id, held = tonumber(held), want = tonumber(want)}
  end
  return st
end

local function pack_state(st)
  local hs = {}
  for i, e in ipairs(st.holders) do
    hs[i] = e.id .. '/' .. int(e.held) .. '/' .. int(e.want)
  end
  return string.format('%.3f|%.6f|', st.tat, st.factor) .. int(st.cut_at) .. '|' .. int(st.win_at) .. '|' ..
    int(st.win_ok) .. '|' .. int(st.win_thr) .. '|' .. int(st.paused) .. '|' .. int(st.touched) .. '|' ..
    table.concat(hs, ' ')
end

-- at_rest reports a host whose budget is what no entry means: nobody holds
-- or wants slots, its rate has caught up with the clock, it is neither
-- slowed nor watched nor paused. Its entry can go.
local function at_rest(st, now)
  return #st.holders == 0 and st.tat <= now and st.factor >= 1 and st.win_thr == 0 and st.paused <= now
end
