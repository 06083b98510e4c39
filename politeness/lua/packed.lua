-- packed: a host's budget as its shard's hosts hash keeps it, in one
-- string, so that one HMGET reads and one HSET writes every host a round
-- settles. Its fields:
--
--   tat factor cut_at win_at win_ok win_thr paused touched holders
--
-- tat: the GCRA's theoretical arrival time (server ms, fractional); factor:
-- the share of the rule's rate in use after backoff, (0, 1]; cut_at: server
-- ms of the last cut; win_at, win_ok, win_thr: the window of recent answers
-- that decides a cut (when it began, the answers that went well, the
-- throttled ones); paused: server ms until which nobody sends (0: none);
-- touched: server ms of the last change; holders: the processes that hold
-- slots of the host's cap or want some, 'id/held/want' separated by spaces.
-- A process whose deadline in the live hash has passed holds nothing.
--
-- On Redis the first eight are PACKED_BIN then eight little-endian doubles,
-- packed and read by Redis's struct library in one C call each way
-- (formatting and matching them as text cost a round half its time); the
-- holders follow as text. Where there is no struct library (the embedded
-- server of crawler run) all of it is text, '|'-separated. Each form is
-- read back by its first byte, so a value an older version wrote as text
-- still reads.

local PACKED_BIN = 'b'
local PACKED_FIELDS = '<dddddddd'
-- struct is Redis's; rawget, since reading a global that is not there is
-- an error in a script.
local struct = rawget(_G, 'struct')

local function fresh_state(now)
  return {tat = now, factor = 1, cut_at = 0, win_at = now, win_ok = 0, win_thr = 0,
    paused = 0, touched = now, holders = {}}
end

-- read_fields returns the eight numbers of s and where its holders begin,
-- or nil when s is in neither form.
local function read_fields(s)
  if struct and string.byte(s, 1) == 98 and #s >= 65 then -- 98: PACKED_BIN
    return struct.unpack(PACKED_FIELDS, s, 2)
  end
  local a, b, c, d, e, f, g, h, rest = string.match(s,
    '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|()')
  if not a then
    return nil
  end
  return tonumber(a), tonumber(b), tonumber(c), tonumber(d), tonumber(e), tonumber(f), tonumber(g), tonumber(h), rest
end

local function unpack_state(s, now)
  local st = fresh_state(now)
  if not s then
    return st
  end
  local tat, factor, cut_at, win_at, win_ok, win_thr, paused, touched, rest = read_fields(s)
  if not rest then
    return st
  end
  st.tat, st.factor, st.cut_at = tat or now, factor or 1, cut_at or 0
  st.win_at, st.win_ok, st.win_thr = win_at or now, win_ok or 0, win_thr or 0
  st.paused, st.touched = paused or 0, touched or now
  local hs = st.holders
  for id, held, want in string.gmatch(string.sub(s, rest), '([^/ ]+)/(%d+)/(%d+)') do
    hs[#hs + 1] = {id = id, held = tonumber(held), want = tonumber(want)}
  end
  return st
end

local function pack_fields(st)
  if struct then
    return PACKED_BIN .. struct.pack(PACKED_FIELDS, st.tat, st.factor, st.cut_at, st.win_at, st.win_ok, st.win_thr,
      st.paused, st.touched)
  end
  return string.format('%.3f|%.6f|', st.tat, st.factor) .. int(st.cut_at) .. '|' .. int(st.win_at) .. '|' ..
    int(st.win_ok) .. '|' .. int(st.win_thr) .. '|' .. int(st.paused) .. '|' .. int(st.touched) .. '|'
end

local function pack_state(st)
  local hs = {}
  for i, e in ipairs(st.holders) do
    hs[i] = e.id .. '/' .. math.floor(e.held) .. '/' .. math.floor(e.want)
  end
  return pack_fields(st) .. table.concat(hs, ' ')
end

-- at_rest reports a host whose budget is what no entry means: nobody holds
-- or wants slots, its rate has caught up with the clock, it is neither
-- slowed nor watched nor paused. Its entry can go.
local function at_rest(st, now)
  return #st.holders == 0 and st.tat <= now and st.factor >= 1 and st.win_thr == 0 and st.paused <= now
end
